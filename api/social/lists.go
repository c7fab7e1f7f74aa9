package social

import (
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Pages of the lists: max_results 1 to 1000, default 100 (the OpenAPI).
const (
	maxPage     = 1000
	defaultPage = 100
)

// listAnswer is a page of users.
type listAnswer struct {
	Data     []render.User    `json:"data,omitempty"`
	Includes *render.Includes `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
	Meta     listMeta         `json:"meta"`
}

type listMeta struct {
	ResultCount int    `json:"result_count"`
	NextToken   string `json:"next_token,omitempty"`
}

func (m *Module) following(w http.ResponseWriter, r *http.Request) error {
	return m.publicList(w, r, storage.RelFollowing)
}

func (m *Module) followers(w http.ResponseWriter, r *http.Request) error {
	return m.publicList(w, r, storage.RelFollowers)
}

func (m *Module) muting(w http.ResponseWriter, r *http.Request) error {
	user, err := httpx.ActingUser(r, "id")
	if err != nil {
		return err
	}
	return m.list(w, r, storage.SocialPage{UserID: user, Relation: storage.RelMuting})
}

func (m *Module) blocking(w http.ResponseWriter, r *http.Request) error {
	user, err := httpx.ActingUser(r, "id")
	if err != nil {
		return err
	}
	return m.list(w, r, storage.SocialPage{UserID: user, Relation: storage.RelBlocking})
}

// publicList answers anyone's following or followers: an unknown or
// hidden user is a partial resource-not-found; a protected user's lists
// are shown only to the user and their followers, else a partial
// not-authorized-for-resource (docs/social-graph.md).
func (m *Module) publicList(w http.ResponseWriter, r *http.Request, rel storage.Relation) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	found, err := m.Store.UsersByIDs(r.Context(), []int64{id})
	if err != nil {
		return fmt.Errorf("load user %d: %w", id, err)
	}
	raw := httpx.FormatID(id)
	if len(found) == 0 || !render.UserVisible(found[0]) {
		return m.refusal(w, apierr.NotFound("user", "id", raw))
	}
	if found[0].ProtectedAt != nil {
		ok, err := m.mayListProtected(r, id)
		if err != nil {
			return err
		}
		if !ok {
			return m.refusal(w, apierr.NotAuthorizedForResource("user", raw,
				fmt.Sprintf("Sorry, you are not authorized to see the %s of the protected user [%s].", rel, raw)))
		}
	}
	return m.list(w, r, storage.SocialPage{UserID: id, Relation: rel})
}

// mayListProtected reports whether the caller may see protected user id's
// lists: the user themself or one of their followers.
func (m *Module) mayListProtected(r *http.Request, id int64) (bool, error) {
	viewer := objects.ViewerOf(r)
	if viewer == 0 {
		return false, nil
	}
	if int64(viewer) == id {
		return true, nil
	}
	ok, err := m.Store.Follows(r.Context(), int64(viewer), id)
	if err != nil {
		return false, fmt.Errorf("check a follow of user %d: %w", id, err)
	}
	return ok, nil
}

// refusal answers 200 with e as the only (partial) error, as the user
// lookups answer a user they can not show.
func (m *Module) refusal(w http.ResponseWriter, e *apierr.Error) error {
	e.Status = 0
	return httpx.WriteJSON(w, http.StatusOK, listAnswer{Errors: objects.Problems(m.Problems, []*apierr.Error{e})})
}

// list answers one page of page's list with the request's fields and
// expansions.
func (m *Module) list(w http.ResponseWriter, r *http.Request, page storage.SocialPage) error {
	q := httpx.ReadQuery(r)
	page.Limit = q.Int("max_results", 1, maxPage, defaultPage)
	if tok, ok := q.String("pagination_token"); ok {
		seq, valid := httpx.ParsePageToken(tok)
		if !valid {
			q.Fail("pagination_token", "The `pagination_token` query parameter value ["+tok+"] is not a token this endpoint gave out", tok)
		}
		page.BeforeSeq = seq
	}
	if err := q.Err(); err != nil {
		return err
	}
	opts, err := objects.ParseUserOptions(r)
	if err != nil {
		return err
	}
	want := page.Limit
	page.Limit++
	entries, err := m.Store.SocialList(r.Context(), page)
	if err != nil {
		return err
	}
	var meta listMeta
	if len(entries) > want {
		entries = entries[:want]
		meta.NextToken = httpx.PageToken(entries[want-1].Seq)
	}
	users := make([]storage.User, len(entries))
	for i, e := range entries {
		users[i] = e.User
	}
	res, err := m.hydrator.Users(r.Context(), users, opts, objects.ViewerOf(r))
	if err != nil {
		return err
	}
	meta.ResultCount = len(res.Data)
	out := listAnswer{Data: res.Data, Meta: meta}
	if !res.Includes.Empty() {
		out.Includes = res.Includes
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}
