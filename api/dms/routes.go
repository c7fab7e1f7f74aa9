// Package dms serves the direct message endpoints: sending a message to a
// user or into a conversation, creating a group conversation, listing and
// looking up a user's DM events, deleting one's own messages
// (docs/direct-messages.md). User context only: a user sees only the
// conversations they are in.
package dms

import (
	"context"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Store is what the DM endpoints need of storage (*postgres.DB).
type Store interface {
	render.Store
	SendDM(ctx context.Context, in storage.DMSend) (storage.DMEvent, error)
	CreateDMGroup(ctx context.Context, in storage.DMSend, participants []int64) (storage.DMEvent, error)
	DMEvents(ctx context.Context, viewer int64, l storage.DMListing) ([]storage.DMEvent, error)
	DMEvent(ctx context.Context, viewer, id int64) (storage.DMEvent, error)
	DeleteDM(ctx context.Context, user, id int64) error
}

// Deps is what the DM endpoints need.
type Deps struct {
	Store     Store
	Validator *validation.Validator
	Clock     func() time.Time
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// Module is the direct messages feature.
type Module struct {
	Deps
	hydrator *render.Hydrator
}

// New builds the module.
func New(d Deps) *Module {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	return &Module{Deps: d, hydrator: &render.Hydrator{Store: d.Store, Clock: d.Clock, MediaURLs: d.MediaURLs}}
}

// listParams are the query parameters of the DM event lists.
var listParams = append([]string{"max_results", "pagination_token", "event_types"}, lookupParams...)

// lookupParams are the fields and expansions of every DM event answer.
var lookupParams = []string{dmEventFieldsParam, render.ExpansionsParam, render.UserFieldsParam, render.TweetFieldsParam, render.PostFieldsParam, render.MediaFieldsParam}

// Routes lists the DM endpoints; scopes are the OpenAPI 2.167
// description's, limits the platform's published ones (per user: 15 per
// 15 minutes for each lookup and send, 1,440 sends per 24 hours per user
// and per app; deletes 300 per 15 minutes and 1,500 per 24 hours per user,
// 4,000 per 24 hours per app).
func (m *Module) Routes() []httpx.Endpoint {
	read := auth.UserContext.Needs(oauth2.DMRead, oauth2.TweetRead, oauth2.UsersRead)
	write := auth.UserContext.Writes().Needs(oauth2.DMWrite, oauth2.TweetRead, oauth2.UsersRead)
	send := func(name string) httpx.Limit {
		return httpx.Limit{Name: name, Requests: 15, Scope: httpx.PerUser, Also: []httpx.Limit{
			{Name: "dm_send_user_24h", Requests: 1440, Window: 24 * time.Hour, Scope: httpx.PerUser, Headers: httpx.HeadersUser24Hour},
			{Name: "dm_send_app_24h", Requests: 1440, Window: 24 * time.Hour, Scope: httpx.PerApp, Headers: httpx.HeadersApp24Hour},
		}}
	}
	lookup := func(name string) httpx.Limit { return httpx.Limit{Name: name, Requests: 15, Scope: httpx.PerUser} }
	body := httpx.JSONBody(httpx.DefaultMaxBody)
	return []httpx.Endpoint{
		{Pattern: "POST /2/dm_conversations/with/{participant_id}/messages", Auth: write, Limit: send("dm_send_with"), Body: body, Handle: m.sendWith},
		{Pattern: "POST /2/dm_conversations", Auth: write, Limit: send("dm_conversations_create"), Body: body, Handle: m.createGroup},
		{Pattern: "POST /2/dm_conversations/{dm_conversation_id}/messages", Auth: write, Limit: send("dm_send_conversation"), Body: body, Handle: m.sendTo},
		{Pattern: "GET /2/dm_events", Auth: read, Limit: lookup("dm_events"), Query: listParams, Handle: m.listAll},
		{Pattern: "GET /2/dm_conversations/with/{participant_id}/dm_events", Auth: read, Limit: lookup("dm_events_with"), Query: listParams, Handle: m.listWith},
		{Pattern: "GET /2/dm_conversations/{id}/dm_events", Auth: read, Limit: lookup("dm_events_conversation"), Query: listParams, Handle: m.listConversation},
		{Pattern: "GET /2/dm_events/{event_id}", Auth: read, Limit: lookup("dm_event_lookup"), Query: lookupParams, Handle: m.lookupOne},
		{Pattern: "DELETE /2/dm_events/{event_id}", Auth: auth.UserContext.Writes().Needs(oauth2.DMRead, oauth2.DMWrite),
			Limit: httpx.Limit{Name: "dm_events_delete", Requests: 300, Scope: httpx.PerUser, Also: []httpx.Limit{
				{Name: "dm_events_delete_user_24h", Requests: 1500, Window: 24 * time.Hour, Scope: httpx.PerUser, Headers: httpx.HeadersUser24Hour},
				{Name: "dm_events_delete_app_24h", Requests: 4000, Window: 24 * time.Hour, Scope: httpx.PerApp, Headers: httpx.HeadersApp24Hour},
			}}, Handle: m.delete},
	}
}
