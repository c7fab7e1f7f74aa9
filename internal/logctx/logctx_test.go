package logctx

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
)

func TestHandlerAddsContextAttrs(t *testing.T) {
	tests := []struct {
		name string
		ctx  context.Context
		want map[string]any
	}{
		{"none", context.Background(), map[string]any{}},
		{"one", With(context.Background(), slog.String("request_id", "r1")), map[string]any{"request_id": "r1"}},
		{"nested", With(With(context.Background(), slog.String("request_id", "r1")), slog.Int("task", 7)),
			map[string]any{"request_id": "r1", "task": float64(7)}},
		{"more than fit inline", With(With(context.Background(), slog.String("request_id", "r1"), slog.Int("task", 7)), slog.String("queue", "q")),
			map[string]any{"request_id": "r1", "task": float64(7), "queue": "q"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(Handler{slog.NewJSONHandler(&buf, nil)}).With("component", "test")
			log.InfoContext(tc.ctx, "hello")
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("decode %q: %v", buf.String(), err)
			}
			if got["component"] != "test" {
				t.Errorf("WithAttrs lost: %v", got)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (record %v)", k, got[k], v, got)
				}
			}
			if _, ok := got["request_id"]; ok != (tc.want["request_id"] != nil) {
				t.Errorf("request_id presence wrong: %v", got)
			}
		})
	}
}

func TestWithDoesNotAlias(t *testing.T) {
	base := With(context.Background(), slog.String("a", "1"))
	left := With(base, slog.String("b", "2"))
	right := With(base, slog.String("c", "3"))
	if len(Attrs(left)) != 2 || len(Attrs(right)) != 2 || Attrs(left)[1].Key != "b" || Attrs(right)[1].Key != "c" {
		t.Fatalf("attrs alias: left %v right %v", Attrs(left), Attrs(right))
	}
}

func TestOrDefault(t *testing.T) {
	own := slog.New(slog.DiscardHandler)
	if got := OrDefault(own); got != own {
		t.Errorf("OrDefault(l) = %p, want l %p", got, own)
	}
	if got := OrDefault(nil); got != slog.Default() {
		t.Errorf("OrDefault(nil) = %p, want slog.Default() %p", got, slog.Default())
	}
}
