// Package users serves user lookups (GET /2/users/{id}, /2/users/me,
// /2/users?ids=, /2/users/by/username/{username}) with user fields and the
// pinned_tweet_id expansion (docs/posts.md).
package users

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
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

// Deps is what the user endpoints need.
type Deps struct {
	Store    render.Store
	Problems objects.ProblemRenderer
	Clock    func() time.Time
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// Module is the users feature.
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

// maxLookup is how many ids or usernames one lookup takes.
const maxLookup = 100

// Routes lists the user endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	limit := httpx.Limit{Name: "users_lookup", Requests: 900, Scope: httpx.PerUser}
	return []httpx.Endpoint{
		{Pattern: "GET /2/users/me", Auth: auth.UserContext.Needs(oauth2.TweetRead, oauth2.UsersRead), Limit: httpx.Limit{Name: "users_me", Requests: 75, Scope: httpx.PerUser},
			Query: render.UserParams, Handle: m.me},
		{Pattern: "GET /2/users/{id}", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead), Limit: limit, Query: render.UserParams, Handle: m.byID},
		{Pattern: "GET /2/users", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead), Limit: limit, Query: append([]string{"ids"}, render.UserParams...), Handle: m.byIDs},
		{Pattern: "GET /2/users/by/username/{username}", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead), Limit: limit, Query: render.UserParams, Handle: m.byUsername},
		{Pattern: "GET /2/users/by", Auth: auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead), Limit: limit, Query: append([]string{"usernames"}, render.UserParams...), Handle: m.byUsernames},
	}
}

// single answers with one user (or only its error).
type single struct {
	Data     *render.User     `json:"data,omitempty"`
	Includes *render.Includes `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
}

// multiple answers with several users.
type multiple struct {
	Data     []render.User    `json:"data,omitempty"`
	Includes *render.Includes `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
}

// lookup is one user lookup: the keys asked for (ids or usernames, in
// request order) and how to load and match them.
type lookup struct {
	param string
	keys  []string
	load  func(ctx context.Context) ([]storage.User, error)
	// key is a user's key as keys hold it (usernames match in any case).
	key  func(u storage.User) string
	norm func(key string) string
}

func byIDKeys(m *Module, param string, ids []int64) lookup {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = httpx.FormatID(id)
	}
	return lookup{param: param, keys: keys,
		load: func(ctx context.Context) ([]storage.User, error) { return m.Store.UsersByIDs(ctx, ids) },
		key:  func(u storage.User) string { return httpx.FormatID(u.ID) }, norm: func(k string) string { return k }}
}

func byNameKeys(m *Module, param string, names []string) lookup {
	return lookup{param: param, keys: names,
		load: func(ctx context.Context) ([]storage.User, error) { return m.Store.UsersByUsernames(ctx, names) },
		key:  func(u storage.User) string { return strings.ToLower(u.Username) }, norm: strings.ToLower}
}

func (m *Module) me(w http.ResponseWriter, r *http.Request) error {
	return m.answer(w, r, byIDKeys(m, "id", []int64{httpx.Principal(r).User.ID}), true)
}

func (m *Module) byID(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	return m.answer(w, r, byIDKeys(m, "id", []int64{id}), true)
}

func (m *Module) byIDs(w http.ResponseWriter, r *http.Request) error {
	q := httpx.ReadQuery(r)
	list := q.IDs("ids", maxLookup, "items")
	if err := q.Err(); err != nil {
		return err
	}
	return m.answer(w, r, byIDKeys(m, "ids", list), false)
}

func (m *Module) byUsername(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("username")
	if !validation.ValidUsername(name) {
		return httpx.FieldErrors([]validation.FieldError{validation.PathUsernameError("username", name)})
	}
	return m.answer(w, r, byNameKeys(m, "username", []string{name}), true)
}

func (m *Module) byUsernames(w http.ResponseWriter, r *http.Request) error {
	q := httpx.ReadQuery(r)
	var unique []string
	for _, n := range q.Items("usernames", maxLookup, "items") {
		if !validation.ValidUsername(n) {
			q.FailField(validation.UsernameError("usernames", n))
			break
		}
		if !slices.ContainsFunc(unique, func(u string) bool { return strings.EqualFold(u, n) }) {
			unique = append(unique, n)
		}
	}
	if err := q.Err(); err != nil {
		return err
	}
	return m.answer(w, r, byNameKeys(m, "usernames", unique), false)
}

// answer loads l's users and shows the visible ones in request order, with
// a partial error for each key that can not be shown; one is answered as
// a single object.
func (m *Module) answer(w http.ResponseWriter, r *http.Request, l lookup, one bool) error {
	opts, err := objects.ParseUserOptions(r)
	if err != nil {
		return err
	}
	found, err := l.load(r.Context())
	if err != nil {
		return fmt.Errorf("load users by %s: %w", l.param, err)
	}
	byKey := make(map[string]storage.User, len(found))
	for _, u := range found {
		byKey[l.key(u)] = u
	}
	var shown []storage.User
	var problems []*apierr.Error
	for _, k := range l.keys {
		u, ok := byKey[l.norm(k)]
		if !ok || !render.UserVisible(u) {
			e := apierr.NotFound("user", l.param, k)
			e.Status = 0
			problems = append(problems, e)
			continue
		}
		shown = append(shown, u)
	}
	res, err := m.hydrator.Users(r.Context(), shown, opts, objects.ViewerOf(r))
	if err != nil {
		return err
	}
	errs := objects.Problems(m.Problems, problems)
	if !one {
		return httpx.WriteJSON(w, http.StatusOK, multiple{Data: res.Data, Includes: res.Includes, Errors: errs})
	}
	out := single{Includes: res.Includes, Errors: errs}
	if len(res.Data) == 1 {
		out.Data = &res.Data[0]
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}
