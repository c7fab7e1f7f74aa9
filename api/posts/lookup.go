package posts

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// maxLookupIDs is how many ids GET /2/tweets takes.
const maxLookupIDs = 100

// lookup answers GET /2/tweets?ids=: the posts the caller may see in
// request order, and a partial error for each id that can not be shown.
func (m *Module) lookup(w http.ResponseWriter, r *http.Request) error {
	list, err := lookupIDs(r)
	if err != nil {
		return err
	}
	opts, err := objects.ParseTweetOptions(r)
	if err != nil {
		return err
	}
	shown, problems, err := m.visible(r.Context(), list, objects.ViewerOf(r), "ids")
	if err != nil {
		return err
	}
	res, err := m.Hydrator.Tweets(r.Context(), shown, opts, objects.ViewerOf(r))
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, lookupResponse{Data: res.Data, Includes: res.Includes, Errors: objects.Problems(m.Problems, problems)})
}

// lookupOne answers GET /2/tweets/{id}; a post that can not be shown is
// a 200 with only its error, as on the platform.
func (m *Module) lookupOne(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	opts, err := objects.ParseTweetOptions(r)
	if err != nil {
		return err
	}
	shown, problems, err := m.visible(r.Context(), []int64{id}, objects.ViewerOf(r), "id")
	if err != nil {
		return err
	}
	res, err := m.Hydrator.Tweets(r.Context(), shown, opts, objects.ViewerOf(r))
	if err != nil {
		return err
	}
	out := singleResponse{Includes: res.Includes, Errors: objects.Problems(m.Problems, problems)}
	if len(res.Data) == 1 {
		out.Data = &res.Data[0]
	}
	return httpx.WriteJSON(w, http.StatusOK, out)
}

// lookupIDs parses the required ids parameter: 1 to 100 post ids.
func lookupIDs(r *http.Request) ([]int64, error) {
	q := httpx.ReadQuery(r)
	list := q.IDs("ids", maxLookupIDs, "ids")
	return list, q.Err()
}

// visible loads the posts of list and splits them into those viewer may
// see, in list order, and the errors of the others (naming param).
func (m *Module) visible(ctx context.Context, list []int64, viewer render.Viewer, param string) ([]storage.Post, []*apierr.Error, error) {
	found, err := m.Store.PostsByIDs(ctx, list)
	if err != nil {
		return nil, nil, fmt.Errorf("load posts: %w", err)
	}
	vis, err := m.Hydrator.Visibility(ctx, found, viewer)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[int64]storage.Post, len(found))
	for _, p := range found {
		byID[p.ID] = p
	}
	var shown []storage.Post
	var problems []*apierr.Error
	for _, id := range list {
		p, ok := byID[id]
		v := render.Gone
		if ok {
			v = vis[id]
		}
		if v != render.Visible {
			problems = append(problems, objects.PostError(id, v, param))
			continue
		}
		shown = append(shown, p)
	}
	return shown, problems, nil
}
