// Package social serves the social graph endpoints: follows, mutes and
// blocks of the authenticated user, and the lists of following,
// followers, muted and blocked users (docs/social-graph.md). Every change
// writes its activity event through the event log (storage).
package social

import (
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/validation"
)

// Deps is what the social graph endpoints need.
type Deps struct {
	Store     Store
	Validator *validation.Validator
	Problems  objects.ProblemRenderer
	Clock     func() time.Time
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// Module is the social graph feature.
type Module struct {
	Deps
	hydrator *render.Hydrator
}

// New builds the module.
func New(d Deps) *Module {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Problems == nil {
		d.Problems = apierr.Writer{}
	}
	return &Module{Deps: d, hydrator: &render.Hydrator{Store: d.Store, Clock: d.Clock, MediaURLs: d.MediaURLs}}
}

// listParams are the query parameters of the lists.
var listParams = append([]string{"max_results", "pagination_token"}, render.UserParams...)

// Routes lists the social graph endpoints. Credentials and scopes are the
// OpenAPI 2.167 security lists; limits per 15 minutes are the platform's
// published ones (docs/social-graph.md).
func (m *Module) Routes() []httpx.Endpoint {
	write := func(scope string) auth.Requirement {
		return auth.UserContext.Writes().Needs(oauth2.TweetRead, oauth2.UsersRead, scope)
	}
	perUser := func(name string, n int) httpx.Limit {
		return httpx.Limit{Name: name, Requests: n, Scope: httpx.PerUser}
	}
	return []httpx.Endpoint{
		{Pattern: "POST /2/users/{id}/following", Auth: write(oauth2.FollowsWrite), Limit: perUser("follows_create", 50),
			Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.follow},
		{Pattern: "DELETE /2/users/{source_user_id}/following/{target_user_id}", Auth: write(oauth2.FollowsWrite), Limit: perUser("follows_delete", 50),
			Handle: m.unfollow},
		{Pattern: "GET /2/users/{id}/following", Auth: auth.AppOrUser.Needs(oauth2.FollowsRead, oauth2.TweetRead, oauth2.UsersRead),
			Limit: perUser("follows_following", 15), Query: listParams, Handle: m.following},
		{Pattern: "GET /2/users/{id}/followers", Auth: auth.AppOrUser.Needs(oauth2.FollowsRead, oauth2.TweetRead, oauth2.UsersRead),
			Limit: perUser("follows_followers", 15), Query: listParams, Handle: m.followers},
		{Pattern: "POST /2/users/{id}/muting", Auth: write(oauth2.MuteWrite), Limit: perUser("mutes_create", 50),
			Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.mute},
		{Pattern: "DELETE /2/users/{source_user_id}/muting/{target_user_id}", Auth: write(oauth2.MuteWrite), Limit: perUser("mutes_delete", 50),
			Handle: m.unmute},
		{Pattern: "GET /2/users/{id}/muting", Auth: auth.UserContext.Needs(oauth2.MuteRead, oauth2.TweetRead, oauth2.UsersRead),
			Limit: perUser("mutes_list", 15), Query: listParams, Handle: m.muting},
		// Block and unblock are not in the OpenAPI 2.167 description: the
		// historic v2 shape (an Aviary extension, docs/social-graph.md).
		{Pattern: "POST /2/users/{id}/blocking", Auth: write(oauth2.BlockWrite), Limit: perUser("blocks_create", 50),
			Body: httpx.JSONBody(httpx.DefaultMaxBody), Handle: m.block},
		{Pattern: "DELETE /2/users/{source_user_id}/blocking/{target_user_id}", Auth: write(oauth2.BlockWrite), Limit: perUser("blocks_delete", 50),
			Handle: m.unblock},
		{Pattern: "GET /2/users/{id}/blocking", Auth: auth.UserContext.Needs(oauth2.BlockRead, oauth2.TweetRead, oauth2.UsersRead),
			Limit: perUser("blocks_list", 15), Query: listParams, Handle: m.blocking},
	}
}
