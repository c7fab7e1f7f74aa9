package news

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// rebuildStale rebuilds every stale story (a source of which stopped being
// visible since it was built; the API serves none of them) from its
// sources still visible, or withdraws it when none is (docs/derived-data.md).
func (r *Refresher) rebuildStale(ctx context.Context, now time.Time, run *Run) error {
	stale, err := r.Store.StaleNewsStories(ctx, or(r.MaxStale, DefaultMaxStale))
	if err != nil {
		return fmt.Errorf("list stale stories: %w", err)
	}
	for _, s := range stale {
		srcs, err := r.Store.NewsSources(ctx, s.Sources)
		if err != nil {
			return fmt.Errorf("read the sources of story %d: %w", s.ID, err)
		}
		built, ok := r.rebuild(s, srcs)
		if !ok {
			if err := r.Store.WithdrawNewsStory(ctx, s.ID, now); err != nil {
				return err
			}
			run.Withdrawn++
			continue
		}
		saved, err := r.Store.RebuildNewsStory(ctx, built, now)
		if errors.Is(err, storage.ErrNotFound) {
			continue // withdrawn meanwhile
		}
		if err != nil {
			return err
		}
		run.Rebuilt = append(run.Rebuilt, saved)
	}
	return nil
}

// rebuild is story s built again from the visible ones of its sources srcs
// (newest first): its keywords that still appear in GroupShare of them, and
// its lead's counts less the sources that went (those of the last hour
// before its build, or gone without a trace, from the last hour's count
// too). ok is false when no source is visible.
func (r *Refresher) rebuild(s storage.NewsStory, srcs []storage.NewsSource) (storage.NewsStory, bool) {
	var posts []storage.Post
	visible, hiddenAt := map[int64]bool{}, map[int64]time.Time{}
	for _, src := range srcs {
		if src.Visible {
			posts = append(posts, src.Post)
			visible[src.Post.ID] = true
		} else {
			hiddenAt[src.Post.ID] = src.Post.CreatedAt
		}
	}
	if len(posts) == 0 {
		return storage.NewsStory{}, false
	}
	lead := s.Lead
	lead.Term = s.LeadTerm
	since := s.UpdatedAt.Add(-time.Hour)
	gone, goneLastHour := 0, 0
	for _, id := range s.Sources {
		if visible[id] {
			continue
		}
		gone++
		if at, ok := hiddenAt[id]; !ok || !at.Before(since) {
			goneLastHour++
		}
	}
	lead.Day = max(lead.Day-gone, 0)
	lead.LastHour = max(lead.LastHour-float64(goneLastHour), 0)
	c := cluster{lead: lead, posts: posts, share: or(r.GroupShare, DefaultGroupShare)}
	c.terms = append(c.terms, lead)
	var candidates []storage.SpikingTerm
	for _, k := range s.Keywords {
		if k != s.LeadTerm {
			candidates = append(candidates, storage.SpikingTerm{Term: k})
		}
	}
	c.group(candidates, map[string]bool{}, or(r.MaxKeywords, DefaultMaxKeywords))
	out := c.story()
	out.ID = s.ID
	return out, true
}
