package news

import (
	"context"
	"fmt"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Fields are a story's fields for news.fields. The defaults are the fields
// the platform's example shows next to the ones it asked for (docs/news.md):
// id, category, name, summary, hook, disclaimer and last_updated_at_ms.
// contexts, cluster_posts_results, keywords and updated_at are shown when
// asked. last_updated_at_ms (the documentation's example) and updated_at
// (the OpenAPI description's News) are both accepted and each is rendered
// when asked, with the same value: the story's last refresh as an RFC 3339
// time with milliseconds, the example's format.
var Fields = httpx.ObjectFields{
	Default: []string{"id", "category", "name", "summary", "hook", "disclaimer", "last_updated_at_ms"},
	Allowed: []string{"category", "cluster_posts_results", "contexts", "disclaimer", "hook", "id", "keywords",
		"last_updated_at_ms", "name", "summary", "updated_at"},
}

// Disclaimer is every story's disclaimer.
const Disclaimer = "This story is a summary of posts on Aviary and may evolve over time. " +
	"It is assembled automatically from what is being posted and can be wrong; check the posts."

// story is a rendered news story; a field not asked for is left out.
type story struct {
	ID                  *string               `json:"id,omitempty"`
	Category            *string               `json:"category,omitempty"`
	Name                *string               `json:"name,omitempty"`
	Summary             *string               `json:"summary,omitempty"`
	Hook                *string               `json:"hook,omitempty"`
	Contexts            *storage.NewsContexts `json:"contexts,omitempty"`
	ClusterPostsResults *[]clusterPost        `json:"cluster_posts_results,omitempty"`
	Disclaimer          *string               `json:"disclaimer,omitempty"`
	Keywords            map[string]int        `json:"keywords,omitempty"`
	UpdatedAt           *string               `json:"updated_at,omitempty"`
	LastUpdatedAtMs     *string               `json:"last_updated_at_ms,omitempty"`
}

// clusterPost is one of a story's posts.
type clusterPost struct {
	PostID string `json:"post_id"`
}

// searchResponse answers a search; meta is always there.
type searchResponse struct {
	Data []story    `json:"data,omitempty"`
	Meta searchMeta `json:"meta"`
}

type searchMeta struct {
	ResultCount int `json:"result_count"`
}

// singleResponse answers a lookup: the story, or only its error.
type singleResponse struct {
	Data   *story           `json:"data,omitempty"`
	Errors []map[string]any `json:"errors,omitempty"`
}

// render shows stories with fields. Cluster posts the viewer may not see
// (deleted since, or their author protected, suspended, deactivated or
// deleted since) are left out.
func (m *Module) render(ctx context.Context, list []storage.NewsStory, fields httpx.FieldSet, viewer render.Viewer) ([]story, error) {
	visible := map[int64]bool{}
	if fields.Has("cluster_posts_results") {
		var ids []int64
		for _, s := range list {
			ids = append(ids, s.PostIDs...)
		}
		var err error
		if visible, err = m.visiblePosts(ctx, ids, viewer); err != nil {
			return nil, err
		}
	}
	out := make([]story, len(list))
	for i, s := range list {
		out[i] = renderStory(s, fields, visible)
	}
	return out, nil
}

// visiblePosts are the posts of ids viewer may see.
func (m *Module) visiblePosts(ctx context.Context, ids []int64, viewer render.Viewer) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	posts, err := m.Store.PostsByIDs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("load cluster posts: %w", err)
	}
	vis, err := m.hydrator.Visibility(ctx, posts, viewer)
	if err != nil {
		return nil, err
	}
	for id, v := range vis {
		out[id] = v == render.Visible
	}
	return out, nil
}

func renderStory(s storage.NewsStory, fields httpx.FieldSet, visible map[int64]bool) story {
	var out story
	text := func(name, v string) *string {
		if !fields.Has(name) {
			return nil
		}
		return &v
	}
	updated := httpx.FormatTime(s.UpdatedAt)
	out.ID = text("id", httpx.FormatID(s.ID))
	out.Category = text("category", s.Category)
	out.Name = text("name", s.Name)
	out.Summary = text("summary", s.Summary)
	out.Hook = text("hook", s.Hook)
	out.Disclaimer = text("disclaimer", Disclaimer)
	out.UpdatedAt = text("updated_at", updated)
	out.LastUpdatedAtMs = text("last_updated_at_ms", updated)
	if fields.Has("contexts") {
		c := s.Contexts.Normalized()
		out.Contexts = &c
	}
	if fields.Has("cluster_posts_results") {
		posts := []clusterPost{}
		for _, id := range s.PostIDs {
			if visible[id] {
				posts = append(posts, clusterPost{PostID: httpx.FormatID(id)})
			}
		}
		out.ClusterPostsResults = &posts
	}
	if fields.Has("keywords") {
		// The description types keywords as an object: each term with its
		// rank (1: the lead; docs/news.md).
		out.Keywords = make(map[string]int, len(s.Keywords))
		for i, k := range s.Keywords {
			out.Keywords[k] = i + 1
		}
	}
	return out
}
