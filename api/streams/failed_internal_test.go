package streams

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// TestFailedAfterClientLeft: a read that failed because the client went
// away (its request context ended mid-render) ends the stream quietly. It
// must not come back as a plain error, which httpx.Adapt would render as
// a 500 after the stream's 200 (an ERROR log line and a superfluous
// WriteHeader for every client that hangs up during a render).
func TestFailedAfterClientLeft(t *testing.T) {
	m := New(Deps{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := m.newStreamWriter(httptest.NewRecorder())
	reason, err := m.failed(ctx, s, fmt.Errorf("stream: load post 1: %w", context.Canceled))
	if reason != storage.DisconnectClient {
		t.Errorf("reason = %q", reason)
	}
	if err != nil && !errors.Is(err, httpx.ErrResponseStarted) {
		t.Errorf("failed returned %v: Adapt would write an error response on the started stream", err)
	}
}
