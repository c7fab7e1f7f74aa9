package adsx

import (
	"log/slog"
	"testing"
)

// TestKitLog: a feature logs through Kit.Log, the kit's Logger or, left
// unset, slog.Default().
func TestKitLog(t *testing.T) {
	own := slog.New(slog.DiscardHandler)
	if got := (Kit{Logger: own}).Log(); got != own {
		t.Errorf("Kit{Logger: l}.Log() = %p, want l %p", got, own)
	}
	if got := (Kit{}).Log(); got != slog.Default() {
		t.Errorf("Kit{}.Log() = %p, want slog.Default() %p", got, slog.Default())
	}
}
