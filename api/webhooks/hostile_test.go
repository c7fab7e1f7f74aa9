package webhooks_test

import (
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/webhooks"
	"github.com/aviary-dev/aviary/storage/ids"
)

// TestReplayRace: replays of one webhook asked for at once: exactly one
// job is made, the others answer ReplayConflictError.
func TestReplayRace(t *testing.T) {
	t.Parallel()
	h := setupHooks(t, 0)
	id := ids.Format(h.webhook(t, h.App, "https://a.example/hook").ID)
	minute := h.Now.UTC().Truncate(time.Minute)
	body := replayBody(id, minute.Add(-time.Hour).Format("200601021504"), minute.Format("200601021504"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, conflicts := 0, 0
	for range 8 {
		wg.Go(func() {
			r := h.Call(t, "POST", "/2/webhooks/replay", h.Bearer, "application/json", body)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case r.Status == 200:
				won++
			case r.Status == 400 && r.Body["reason"] == webhooks.ReasonReplayConflict:
				conflicts++
			default:
				t.Errorf("%d %s", r.Status, r.Raw)
			}
		})
	}
	wg.Wait()
	if won != 1 || conflicts != 7 {
		t.Fatalf("%d jobs made, %d conflicts; want 1 and 7", won, conflicts)
	}
}
