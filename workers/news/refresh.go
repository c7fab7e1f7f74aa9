// Package news builds the news stories GET /2/news/search and
// GET /2/news/{id} serve: every run of news:refresh finds the terms
// spiking in the keyword insights aggregates, clusters the recent posts
// around the strongest ones and stores (or refreshes) one story per
// cluster. Schedule enqueues the run every Interval (docs/news.md).
package news

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/internal/logctx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access of the refresher (storage/postgres.DB).
type Store interface {
	SpikingTerms(ctx context.Context, q storage.SpikeQuery) ([]storage.SpikingTerm, error)
	NewsClusterPosts(ctx context.Context, q storage.ClusterQuery) ([]storage.Post, error)
	UpsertNewsStory(ctx context.Context, s storage.NewsStory, now time.Time, exclude []int64) (storage.NewsStory, bool, error)
	StaleNewsStories(ctx context.Context, limit int) ([]storage.NewsStory, error)
	NewsSources(ctx context.Context, ids []int64) ([]storage.NewsSource, error)
	RebuildNewsStory(ctx context.Context, s storage.NewsStory, now time.Time) (storage.NewsStory, error)
	WithdrawNewsStory(ctx context.Context, id int64, now time.Time) error
}

// Defaults of the Refresher's tuning fields.
const (
	DefaultMinPosts    = 5
	DefaultMinRatio    = 3.0
	DefaultMaxStories  = 20
	DefaultCandidates  = 200
	DefaultClusterSize = 200
	DefaultGroupShare  = 0.3
	DefaultMaxKeywords = 10
	// DefaultMaxStale bounds the stale stories one run rebuilds or
	// withdraws (the rest wait, unserved, for the next run).
	DefaultMaxStale = 100
	// MinWordRunes is the shortest word term that may lead or join a
	// story; tags ("#ai", "$ge") need two characters after their sign.
	MinWordRunes = 3
)

// Refresher handles news:refresh. The zero value of a tuning field means
// its default.
type Refresher struct {
	Store  Store
	Logger *slog.Logger
	Clock  func() time.Time
	// MinPosts and MinRatio make a term spike: at least MinPosts posts in
	// the last hour and (last hour + 1) / (hourly baseline + 1) >= MinRatio.
	MinPosts int
	MinRatio float64
	// MaxStories bounds the stories one run builds or refreshes.
	MaxStories int
	// Candidates bounds the spiking terms read per run (before stopwords
	// and short terms are dropped).
	Candidates int
	// ClusterSize bounds the recent posts read per lead term.
	ClusterSize int
	// GroupShare is the share of a lead term's posts another spiking term
	// must appear in to join its story.
	GroupShare float64
	// MaxKeywords bounds a story's terms, the lead included.
	MaxKeywords int
	// MaxStale bounds the stale stories rebuilt or withdrawn per run.
	MaxStale int
}

// Run is what one refresh did.
type Run struct {
	// Spiking is how many eligible terms spiked.
	Spiking int
	// Stories are the stories built or refreshed, strongest first.
	Stories []storage.NewsStory
	// Created counts the new ones among them.
	Created int
	// Rebuilt are the stale stories rebuilt from their remaining visible
	// sources; Withdrawn counts those none of whose sources remained.
	Rebuilt   []storage.NewsStory
	Withdrawn int
}

// ProcessTask implements asynq.Handler.
func (r *Refresher) ProcessTask(ctx context.Context, _ *asynq.Task) error {
	_, err := r.Refresh(ctx)
	return err
}

// Refresh builds or refreshes the stories of the terms spiking now. Terms
// are taken strongest first; each one not yet in a story leads one: its
// recent posts are read, the other spiking terms found in at least
// GroupShare of them join it, and the story is stored (refreshing the
// story of its lead or of one of its terms updated in the last 24 hours).
func (r *Refresher) Refresh(ctx context.Context) (Run, error) {
	now := r.now().UTC()
	var run Run
	spikes, err := r.Store.SpikingTerms(ctx, storage.SpikeQuery{Now: now, MinPosts: r.minPosts(),
		MinRatio: or(r.MinRatio, DefaultMinRatio), Limit: or(r.Candidates, DefaultCandidates)})
	if err != nil {
		return run, fmt.Errorf("find spiking terms: %w", err)
	}
	eligible := spikes[:0]
	for _, s := range spikes {
		if Eligible(s.Term) {
			eligible = append(eligible, s)
		}
	}
	run.Spiking = len(eligible)
	used := map[string]bool{}
	var touched []int64
	for i, lead := range eligible {
		if len(run.Stories) >= or(r.MaxStories, DefaultMaxStories) {
			break
		}
		if used[lead.Term] {
			continue
		}
		posts, err := r.Store.NewsClusterPosts(ctx, storage.ClusterQuery{Term: lead.Term, Since: now.Add(-storage.NewsRefreshWindow),
			Limit: or(r.ClusterSize, DefaultClusterSize)})
		if err != nil {
			return run, fmt.Errorf("read the posts of %q: %w", lead.Term, err)
		}
		if len(posts) < r.minPosts() {
			continue // the aggregates counted posts that are gone or hidden
		}
		c := cluster{lead: lead, posts: posts, share: or(r.GroupShare, DefaultGroupShare)}
		c.terms = append(c.terms, lead)
		c.group(eligible[i+1:], used, or(r.MaxKeywords, DefaultMaxKeywords))
		for _, t := range c.terms {
			used[t.Term] = true
		}
		saved, created, err := r.Store.UpsertNewsStory(ctx, c.story(), now, touched)
		if err != nil {
			return run, fmt.Errorf("store the story of %q: %w", lead.Term, err)
		}
		touched = append(touched, saved.ID)
		run.Stories = append(run.Stories, saved)
		if created {
			run.Created++
		}
	}
	// After the spiking terms, which may have refreshed some stale stories
	// from fresh posts already.
	if err := r.rebuildStale(ctx, now, &run); err != nil {
		return run, err
	}
	if len(run.Stories)+len(run.Rebuilt)+run.Withdrawn > 0 {
		logctx.OrDefault(r.Logger).InfoContext(ctx, "news refreshed", "spiking", run.Spiking, "stories", len(run.Stories), "created", run.Created,
			"rebuilt", len(run.Rebuilt), "withdrawn", run.Withdrawn)
	}
	return run, nil
}

// Eligible reports whether a term may lead or join a story: not the
// all-posts term "", a tag ("#", "$", "@") of at least two characters, or a
// word of at least MinWordRunes that is not a stopword nor a number.
func Eligible(term string) bool {
	if term == "" {
		return false
	}
	if strings.ContainsRune("#$@", rune(term[0])) {
		return utf8.RuneCountInString(term[1:]) >= 2
	}
	if utf8.RuneCountInString(term) < MinWordRunes || posttext.IsStopword(term) {
		return false
	}
	return strings.ContainsFunc(term, func(c rune) bool { return !unicode.IsDigit(c) })
}

func (r *Refresher) minPosts() int { return or(r.MinPosts, DefaultMinPosts) }

func (r *Refresher) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}

// or is v, or def when v is not positive.
func or[T int | float64](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
