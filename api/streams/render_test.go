package streams

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRenderCache: streams delivering one post with the same fields share
// one rendering (run once, detached from the first caller's cancellation);
// other fields or posts render on their own; a failed rendering is not
// kept; renderings expire after renderTTL.
func TestRenderCache(t *testing.T) {
	c := newRenderCache()
	var runs atomic.Int64
	release := make(chan struct{})
	slow := func(ctx context.Context) ([]byte, error) {
		runs.Add(1)
		<-release
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return []byte(`{"data":{}}`), nil
	}
	key := renderKey{postID: 1, opts: "a"}

	first, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	results := make([][]byte, 50)
	errs := make([]error, 50)
	for i := range 50 {
		ctx := context.Background()
		if i == 0 {
			ctx = first
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = c.get(ctx, key, slow)
		}()
	}
	time.Sleep(50 * time.Millisecond)
	cancel() // the first caller goes away: the others still get the post
	close(release)
	wg.Wait()
	if n := runs.Load(); n != 1 {
		t.Fatalf("50 streams ran the rendering %d times, want once", n)
	}
	for i := 1; i < 50; i++ {
		if errs[i] != nil || string(results[i]) != `{"data":{}}` {
			t.Fatalf("caller %d: %q, %v", i, results[i], errs[i])
		}
	}

	if _, err := c.get(context.Background(), renderKey{postID: 1, opts: "b"}, slow); err != nil || runs.Load() != 2 {
		t.Errorf("other fields: %v, runs %d, want a rendering of their own", err, runs.Load())
	}
	boom := errors.New("store unavailable")
	failing := func(context.Context) ([]byte, error) { runs.Add(1); return nil, boom }
	if _, err := c.get(context.Background(), renderKey{postID: 2}, failing); !errors.Is(err, boom) {
		t.Errorf("failed rendering: %v", err)
	}
	if _, err := c.get(context.Background(), renderKey{postID: 2}, slow); err != nil || runs.Load() != 4 {
		t.Errorf("after a failure: %v, runs %d; want the post rendered again", err, runs.Load())
	}

	c.mu.Lock()
	for _, e := range c.entries {
		e.started = e.started.Add(-renderTTL)
	}
	c.mu.Unlock()
	if _, err := c.get(context.Background(), key, slow); err != nil || runs.Load() != 5 {
		t.Errorf("after renderTTL: %v, runs %d; want a new rendering", err, runs.Load())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) != 1 || len(c.order) != 1 {
		t.Errorf("expired renderings kept: %d entries, %d in order", len(c.entries), len(c.order))
	}
}
