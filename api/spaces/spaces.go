// Package spaces serves the Spaces `aviary admin space` records
// (GET /2/spaces/{id}; docs/spaces-broadcasts.md).
package spaces

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Store is the record access of the Spaces endpoints (storage/postgres.DB).
type Store interface {
	render.Store
	SpaceByID(ctx context.Context, id string) (storage.Space, error)
}

// Deps is what the Spaces endpoints need.
type Deps struct {
	Store    Store
	Problems objects.ProblemRenderer
	Clock    func() time.Time
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// Module is the Spaces feature.
type Module struct {
	Deps
	hydrator *render.Hydrator
}

// New builds the module.
func New(d Deps) *Module {
	if d.Problems == nil {
		d.Problems = apierr.Writer{}
	}
	return &Module{Deps: d, hydrator: &render.Hydrator{Store: d.Store, Clock: d.Clock, MediaURLs: d.MediaURLs}}
}

// Query parameters.
const (
	fieldsParam     = "space.fields"
	expansionsParam = "expansions"
	topicFields     = "topic.fields"
)

// Fields are the space.fields the description lists; id and state by
// default, as the platform answers.
var Fields = httpx.ObjectFields{
	Default: []string{"id", "state"},
	Allowed: []string{"created_at", "creator_id", "ended_at", "host_ids", "id", "invited_user_ids", "is_ticketed", "lang",
		"participant_count", "scheduled_start", "speaker_ids", "started_at", "state", "subscriber_count", "title",
		"topic_ids", "updated_at"},
}

// expansions are the description's Space expansions; Aviary's Spaces
// have hosts (host_ids, creator_id) and none of the others.
var expansions = []string{"creator_id", "host_ids", "invited_user_ids", "speaker_ids", "topic_ids"}

var topicFieldNames = []string{"description", "id", "name"}

// idPattern is the description's Space id.
var idPattern = regexp.MustCompile(`^[a-zA-Z0-9]{1,13}$`)

// Routes lists the Spaces endpoints: app-only or user context (OAuth 2.0
// with tweet.read, users.read and space.read), 300 requests per 15
// minutes per user (per app for app-only callers), as the platform.
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "GET /2/spaces/{id}", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead, oauth2.SpaceRead),
			Query: []string{fieldsParam, expansionsParam, render.UserFieldsParam, topicFields},
			Limit: httpx.Limit{Name: "spaces_lookup", Requests: 300, Scope: httpx.PerUser}, Handle: m.byID},
	}
}

// space is a rendered Space; a field not asked for is left out.
type space struct {
	ID               string   `json:"id"`
	State            string   `json:"state"`
	Title            *string  `json:"title,omitempty"`
	CreatedAt        string   `json:"created_at,omitempty"`
	StartedAt        string   `json:"started_at,omitempty"`
	EndedAt          string   `json:"ended_at,omitempty"`
	UpdatedAt        string   `json:"updated_at,omitempty"`
	CreatorID        string   `json:"creator_id,omitempty"`
	HostIDs          []string `json:"host_ids,omitempty"`
	SpeakerIDs       []string `json:"speaker_ids,omitempty"`
	Lang             string   `json:"lang,omitempty"`
	IsTicketed       *bool    `json:"is_ticketed,omitempty"`
	ParticipantCount *int     `json:"participant_count,omitempty"`
	SubscriberCount  *int     `json:"subscriber_count,omitempty"`
}

type includes struct {
	Users []render.User `json:"users,omitempty"`
}

type single struct {
	Data     *space           `json:"data,omitempty"`
	Includes *includes        `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
}

// byID answers GET /2/spaces/{id}; an unknown Space (or one whose host the
// public may not see) is a 200 with only its error, as the other
// single-object lookups answer.
func (m *Module) byID(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if !idPattern.MatchString(id) {
		return httpx.FieldErrors([]validation.FieldError{{Field: "id", Values: []string{id},
			Message: fmt.Sprintf("The `id` path parameter value [%s] does not match ^[a-zA-Z0-9]{1,13}$", id)}})
	}
	q := httpx.ReadQuery(r)
	fields := Fields.With(q.List(fieldsParam, Fields.Allowed)...)
	expand := map[string]bool{}
	for _, e := range q.List(expansionsParam, expansions) {
		expand[e] = true
	}
	userFields := render.UserFields.With(q.List(render.UserFieldsParam, render.UserFields.Allowed)...)
	q.List(topicFields, topicFieldNames)
	if err := q.Err(); err != nil {
		return err
	}
	s, err := m.Store.SpaceByID(r.Context(), id)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return fmt.Errorf("load space %s: %w", id, err)
	}
	var host []storage.User
	if err == nil {
		if host, err = m.Store.UsersByIDs(r.Context(), []int64{s.HostID}); err != nil {
			return fmt.Errorf("load the host of space %s: %w", id, err)
		}
	}
	if len(host) == 0 || !render.UserVisible(host[0]) {
		e := apierr.NotFound("space", "id", id)
		e.Status = 0
		return httpx.WriteJSON(w, http.StatusOK, single{Errors: objects.Problems(m.Problems, []*apierr.Error{e})})
	}
	out := single{Data: renderSpace(s, fields)}
	if expand["host_ids"] || expand["creator_id"] {
		res, err := m.hydrator.Users(r.Context(), host, render.Options{User: userFields}, objects.ViewerOf(r))
		if err != nil {
			return err
		}
		out.Includes = &includes{Users: res.Data}
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func renderSpace(s storage.Space, f httpx.FieldSet) *space {
	out := &space{ID: s.ID, State: "live"}
	updated := s.CreatedAt
	if s.EndedAt != nil {
		out.State, updated = "ended", *s.EndedAt
		if f.Has("ended_at") {
			out.EndedAt = httpx.FormatTime(*s.EndedAt)
		}
	}
	host := httpx.FormatID(s.HostID)
	if f.Has("title") {
		out.Title = &s.Title
	}
	if f.Has("created_at") {
		out.CreatedAt = httpx.FormatTime(s.CreatedAt)
	}
	if f.Has("started_at") {
		out.StartedAt = httpx.FormatTime(s.CreatedAt)
	}
	if f.Has("updated_at") {
		out.UpdatedAt = httpx.FormatTime(updated)
	}
	if f.Has("creator_id") {
		out.CreatorID = host
	}
	if f.Has("host_ids") {
		out.HostIDs = []string{host}
	}
	if f.Has("speaker_ids") {
		out.SpeakerIDs = []string{host}
	}
	if f.Has("is_ticketed") {
		no := false
		out.IsTicketed = &no
	}
	zero := 0
	if f.Has("participant_count") {
		out.ParticipantCount = &zero
	}
	if f.Has("subscriber_count") {
		out.SubscriberCount = &zero
	}
	return out
}
