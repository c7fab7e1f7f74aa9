package sweep

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestCleanup(t *testing.T) {
	now := time.Date(2026, 11, 23, 5, 0, 0, 0, time.UTC)
	cleaned := map[string]time.Time{}
	boom := errors.New("boom")
	c := &Cleanup{Label: "test-cleanup",
		Pending: func(_ context.Context, at time.Time, limit int) ([]string, error) {
			if !at.Equal(now) || limit != 7 {
				t.Errorf("Pending(%v, %d)", at, limit)
			}
			return []string{"a", "b"}, nil
		},
		Clean: func(_ context.Context, id string, at time.Time) (int64, error) {
			if id == "bad" {
				return 0, boom
			}
			cleaned[id] = at
			return 3, nil
		}}
	if c.Name() != "test-cleanup" {
		t.Errorf("Name() = %q", c.Name())
	}
	ids, err := c.Due(context.Background(), now, 7)
	if err != nil || len(ids) != 2 {
		t.Fatalf("Due = %v, %v", ids, err)
	}
	for _, id := range ids {
		if w, err := c.Check(context.Background(), id, now); w != nil || err != nil {
			t.Errorf("Check(%s) = %v, %v; want nothing to enqueue", id, w, err)
		}
	}
	if len(cleaned) != 2 || !cleaned["a"].Equal(now) {
		t.Errorf("cleaned %v", cleaned)
	}
	if _, err := c.Check(context.Background(), "bad", now); !errors.Is(err, boom) {
		t.Errorf("Check(bad) = %v, want the store's error", err)
	}
	if c.Enqueued(context.Background(), "a", now) != nil || c.Abandoned(context.Background(), "a", nil, now) != nil || c.Swept(context.Background(), ids, now) != nil {
		t.Error("a cleanup records nothing of its own")
	}
}
