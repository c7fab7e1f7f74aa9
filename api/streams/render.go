package streams

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aviary-dev/aviary/render"
)

// renderTTL is how long a rendered post is shared after its rendering
// started: long enough for every stream of the replica to write one
// delivery, short enough that counters read later are fresh.
const renderTTL = 5 * time.Second

// renderKey names one rendering: a post with a set of fields and
// expansions.
type renderKey struct {
	postID int64
	opts   string
}

// optionsKey is opts as a renderKey part: streams asking for the same
// fields (in the same order) share their renderings.
func optionsKey(opts render.Options) string { return fmt.Sprintf("%v", opts) }

// rendered is one post rendered (or being rendered) for a key: body is the
// JSON object of its data and includes, nil when the post is not shown.
type rendered struct {
	ready   chan struct{}
	started time.Time
	body    []byte
	err     error
}

// renderCache shares the rendering of one post among the streams of this
// replica that deliver it with the same fields. Each rendering reads the
// store (the post, its visibility, its expansions): without sharing, one
// post matching for thousands of streams is thousands of reads at once,
// and the store's bound ends streams. A rendering that failed is not kept.
type renderCache struct {
	mu      sync.Mutex
	entries map[renderKey]*rendered
	order   []renderKey // insertion order, for expiry
}

func newRenderCache() *renderCache {
	return &renderCache{entries: map[renderKey]*rendered{}}
}

// get returns key's rendering, running render (detached from the caller's
// cancellation: the other streams wait for it too) if no stream of the
// replica did within renderTTL. Waiting ends with ctx.
func (c *renderCache) get(ctx context.Context, key renderKey, render func(context.Context) ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	now := time.Now()
	c.expire(now)
	e, ok := c.entries[key]
	if !ok {
		e = &rendered{ready: make(chan struct{}), started: now}
		c.entries[key] = e
		c.order = append(c.order, key)
	}
	c.mu.Unlock()
	if !ok {
		e.body, e.err = render(context.WithoutCancel(ctx))
		if e.err != nil {
			c.mu.Lock()
			if c.entries[key] == e {
				delete(c.entries, key)
			}
			c.mu.Unlock()
		}
		close(e.ready)
	}
	select {
	case <-e.ready:
		return e.body, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// expire drops the renderings started more than renderTTL before now.
// Called with c.mu held.
func (c *renderCache) expire(now time.Time) {
	n := 0
	for _, k := range c.order {
		e, ok := c.entries[k]
		if !ok {
			n++
			continue
		}
		if now.Sub(e.started) < renderTTL {
			break
		}
		delete(c.entries, k)
		n++
	}
	c.order = c.order[n:]
}
