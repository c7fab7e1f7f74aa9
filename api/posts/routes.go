// Package posts serves the post ("tweet") endpoints: creating a post as a
// user, with media attachments (media.go), and deleting one's own posts.
package posts

import (
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/validation"
)

// Deps is what the post endpoints need.
type Deps struct {
	Store     Store
	Validator *validation.Validator
	Clock     func() time.Time
}

// Module is the posts feature.
type Module struct{ Deps }

// New builds the module.
func New(d Deps) *Module {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	return &Module{Deps: d}
}

// Routes lists the post endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{
			Pattern: "POST /2/tweets",
			Auth:    auth.UserContext.Writes(),
			Limit:   httpx.Limit{Name: "tweets_create", Requests: 200, Scope: httpx.PerUser},
			Body:    httpx.JSONBody(httpx.DefaultMaxBody),
			Handle:  m.create,
		},
		{
			Pattern: "DELETE /2/tweets/{id}",
			Auth:    auth.UserContext.Writes(),
			Limit:   httpx.Limit{Name: "tweets_delete", Requests: 50, Scope: httpx.PerUser},
			Handle:  m.delete,
		},
	}
}
