package apitest

import (
	"context"
	"log/slog"
	"sync"
)

// LogRecorder is a slog.Handler that keeps every record.
type LogRecorder struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *LogRecorder) Enabled(context.Context, slog.Level) bool { return true }

func (l *LogRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, r.Clone())
	return nil
}

func (l *LogRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *LogRecorder) WithGroup(string) slog.Handler      { return l }

// Len is the number of records kept.
func (l *LogRecorder) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.records)
}

// Since returns the records with message msg logged after the first n.
func (l *LogRecorder) Since(n int, msg string) []slog.Record {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []slog.Record
	for _, r := range l.records[n:] {
		if r.Message == msg {
			out = append(out, r)
		}
	}
	return out
}

// Count returns how many records with message msg were logged at level.
func (l *LogRecorder) Count(msg string, level slog.Level) int {
	n := 0
	for _, r := range l.Since(0, msg) {
		if r.Level == level {
			n++
		}
	}
	return n
}
