// Package users serves user lookups (GET /2/users/{id}, /2/users/me,
// /2/users?ids=, /2/users/by/username/{username}) with user fields and the
// pinned_tweet_id expansion (docs/posts.md).
package users

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Deps is what the user endpoints need.
type Deps struct {
	Store    objects.Store
	Problems objects.ProblemRenderer
	Clock    func() time.Time
}

// Module is the users feature.
type Module struct {
	Deps
	hydrator *objects.Hydrator
}

// New builds the module.
func New(d Deps) *Module {
	if d.Problems == nil {
		d.Problems = apierr.Writer{}
	}
	return &Module{Deps: d, hydrator: &objects.Hydrator{Store: d.Store, Clock: d.Clock}}
}

// maxLookup is how many ids or usernames one lookup takes.
const maxLookup = 100

// Routes lists the user endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	limit := httpx.Limit{Name: "users_lookup", Requests: 900, Scope: httpx.PerUser}
	return []httpx.Endpoint{
		{Pattern: "GET /2/users/me", Auth: auth.UserContext, Limit: httpx.Limit{Name: "users_me", Requests: 75, Scope: httpx.PerUser},
			Query: objects.UserParams, Handle: m.me},
		{Pattern: "GET /2/users/{id}", Auth: auth.AppOrUser, Limit: limit, Query: objects.UserParams, Handle: m.byID},
		{Pattern: "GET /2/users", Auth: auth.AppOrUser, Limit: limit, Query: append([]string{"ids"}, objects.UserParams...), Handle: m.byIDs},
		{Pattern: "GET /2/users/by/username/{username}", Auth: auth.AppOrUser, Limit: limit, Query: objects.UserParams, Handle: m.byUsername},
		{Pattern: "GET /2/users/by", Auth: auth.AppOrUser, Limit: limit, Query: append([]string{"usernames"}, objects.UserParams...), Handle: m.byUsernames},
	}
}

// single answers with one user (or only its error).
type single struct {
	Data     *objects.User     `json:"data,omitempty"`
	Includes *objects.Includes `json:"includes,omitempty"`
	Errors   []map[string]any  `json:"errors,omitempty"`
}

// multiple answers with several users.
type multiple struct {
	Data     []objects.User    `json:"data,omitempty"`
	Includes *objects.Includes `json:"includes,omitempty"`
	Errors   []map[string]any  `json:"errors,omitempty"`
}

func (m *Module) me(w http.ResponseWriter, r *http.Request) error {
	return m.answerOne(w, r, httpx.Principal(r).User.ID, "id")
}

func (m *Module) byID(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	return m.answerOne(w, r, id, "id")
}

func (m *Module) answerOne(w http.ResponseWriter, r *http.Request, id int64, param string) error {
	opts, err := objects.ParseUserOptions(r)
	if err != nil {
		return err
	}
	found, err := m.Store.UsersByIDs(r.Context(), []int64{id})
	if err != nil {
		return fmt.Errorf("load user %d: %w", id, err)
	}
	res, problems, err := m.render(r.Context(), []int64{id}, found, opts, objects.ViewerOf(r), param)
	if err != nil {
		return err
	}
	out := single{Includes: res.Includes, Errors: problems}
	if len(res.Data) == 1 {
		out.Data = &res.Data[0]
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func (m *Module) byIDs(w http.ResponseWriter, r *http.Request) error {
	items, err := listParam(r, "ids")
	if err != nil {
		return err
	}
	var list []int64
	var errs []apierr.ParamError
	for _, item := range items {
		id, ok := validation.ParseID(item)
		if !ok {
			errs = append(errs, apierr.Param("ids", fmt.Sprintf("The `ids` query parameter value [%s] does not match %s", item, validation.IDPattern), item))
			continue
		}
		list = append(list, id)
	}
	if len(errs) > 0 {
		return apierr.InvalidRequest(errs...)
	}
	opts, err := objects.ParseUserOptions(r)
	if err != nil {
		return err
	}
	found, err := m.Store.UsersByIDs(r.Context(), list)
	if err != nil {
		return fmt.Errorf("load users: %w", err)
	}
	res, problems, err := m.render(r.Context(), list, found, opts, objects.ViewerOf(r), "ids")
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, multiple{Data: res.Data, Includes: res.Includes, Errors: problems})
}

// usernamePattern is the platform's username rule.
var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9_]{1,15}$`)

func (m *Module) byUsername(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("username")
	if !usernamePattern.MatchString(name) {
		return apierr.InvalidParam("username", fmt.Sprintf("The `username` path parameter value [%s] does not match %s", name, usernamePattern), name)
	}
	opts, err := objects.ParseUserOptions(r)
	if err != nil {
		return err
	}
	res, problems, err := m.byNames(r.Context(), []string{name}, opts, objects.ViewerOf(r), "username")
	if err != nil {
		return err
	}
	out := single{Includes: res.Includes, Errors: problems}
	if len(res.Data) == 1 {
		out.Data = &res.Data[0]
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

func (m *Module) byUsernames(w http.ResponseWriter, r *http.Request) error {
	names, err := listParam(r, "usernames")
	if err != nil {
		return err
	}
	for _, n := range names {
		if !usernamePattern.MatchString(n) {
			return apierr.InvalidParam("usernames", fmt.Sprintf("The `usernames` query parameter value [%s] does not match %s", n, usernamePattern), n)
		}
	}
	opts, err := objects.ParseUserOptions(r)
	if err != nil {
		return err
	}
	res, problems, err := m.byNames(r.Context(), names, opts, objects.ViewerOf(r), "usernames")
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, multiple{Data: res.Data, Includes: res.Includes, Errors: problems})
}

// byNames looks users up by username, in request order.
func (m *Module) byNames(ctx context.Context, names []string, opts objects.Options, viewer objects.Viewer, param string) (objects.Result[objects.User], []map[string]any, error) {
	found, err := m.Store.UsersByUsernames(ctx, names)
	if err != nil {
		return objects.Result[objects.User]{}, nil, fmt.Errorf("load users by username: %w", err)
	}
	byName := map[string]storage.User{}
	for _, u := range found {
		byName[strings.ToLower(u.Username)] = u
	}
	var shown []storage.User
	var problems []map[string]any
	for _, n := range names {
		u, ok := byName[strings.ToLower(n)]
		if !ok || !objects.UserVisible(u) {
			e := apierr.NotFound("user", param, n)
			e.Status = 0
			problems = append(problems, m.Problems.ProblemJSON(e))
			continue
		}
		shown = append(shown, u)
	}
	res, err := m.hydrator.Users(ctx, shown, opts, viewer)
	return res, problems, err
}

// render shows the visible users of found in list order, with an error
// for each id that can not be shown.
func (m *Module) render(ctx context.Context, list []int64, found []storage.User, opts objects.Options, viewer objects.Viewer, param string) (objects.Result[objects.User], []map[string]any, error) {
	byID := map[int64]storage.User{}
	for _, u := range found {
		byID[u.ID] = u
	}
	var shown []storage.User
	var problems []map[string]any
	for _, id := range list {
		u, ok := byID[id]
		if !ok || !objects.UserVisible(u) {
			problems = append(problems, m.Problems.ProblemJSON(objects.UserNotFound(id, param)))
			continue
		}
		shown = append(shown, u)
	}
	res, err := m.hydrator.Users(ctx, shown, opts, viewer)
	return res, problems, err
}

// listParam reads a required comma list of 1 to maxLookup items.
func listParam(r *http.Request, name string) ([]string, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || q.Get(name) == "" {
		return nil, apierr.MissingParam(name)
	}
	items := strings.Split(q.Get(name), ",")
	if len(items) > maxLookup {
		return nil, apierr.InvalidParam(name, fmt.Sprintf("The `%s` query parameter lists %d items; the most is %d.", name, len(items), maxLookup), q.Get(name))
	}
	return items, nil
}
