package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// throttledWarner logs a warning at most once per interval and reports how
// many were suppressed in between.
type throttledWarner struct {
	every  time.Duration
	now    func() time.Time
	logger *slog.Logger

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func (w *throttledWarner) warn(ctx context.Context, msg string, args ...any) {
	w.mu.Lock()
	now := w.now()
	if !w.last.IsZero() && now.Sub(w.last) < w.every {
		w.suppressed++
		w.mu.Unlock()
		return
	}
	w.last = now
	suppressed := w.suppressed
	w.suppressed = 0
	w.mu.Unlock()
	w.logger.WarnContext(ctx, msg, append(args, "suppressed", suppressed)...)
}
