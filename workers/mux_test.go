package workers

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/media"
)

// TestNewMuxRoutesMedia: with a media processor, media:process is served
// by it (a payload without a media id is its error, not a missing handler).
func TestNewMuxRoutesMedia(t *testing.T) {
	mux := NewMux(Deps{Media: &media.Processor{}, Logger: slog.New(slog.DiscardHandler)})
	err := mux.ProcessTask(context.Background(), asynq.NewTask(tasks.TypeMediaProcess, []byte(`{}`)))
	if err == nil || !strings.Contains(err.Error(), "media payload without media id") || !errors.Is(err, asynq.SkipRetry) {
		t.Errorf("media:process = %v, want the media processor's payload error", err)
	}
	without := NewMux(Deps{Logger: slog.New(slog.DiscardHandler)})
	err = without.ProcessTask(context.Background(), asynq.NewTask(tasks.TypeMediaProcess, []byte(`{"media_id":1}`)))
	if err == nil || !strings.Contains(err.Error(), "handler not found") {
		t.Errorf("a mux without the media processor served its task: %v", err)
	}
}
