package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
)

func TestAdaptAfterResponseStarted(t *testing.T) {
	sent := func(w http.ResponseWriter, r *http.Request) error {
		if err := WriteJSON(w, http.StatusOK, map[string]string{"status": "sent"}); err != nil {
			return err
		}
		return fmt.Errorf("stream: %w", ErrResponseStarted)
	}
	tests := []struct {
		name     string
		h        HandlerFunc
		canceled bool // the client went away
		status   int
		body     string
		level    string // level of the one log record; "" means none
	}{
		{"late failure is only logged", sent, false, 200, `{"status":"sent"}` + "\n", "WARN"},
		{"late failure after the client left", sent, true, 200, `{"status":"sent"}` + "\n", "DEBUG"},
		{"body that cannot be encoded", func(w http.ResponseWriter, r *http.Request) error {
			return WriteJSON(w, http.StatusCreated, map[string]any{"n": math.Inf(1)})
		}, false, 201, "", "WARN"},
		{"error before writing is rendered", func(w http.ResponseWriter, r *http.Request) error {
			return apierr.InvalidParam("x", "bad")
		}, false, 400, "invalid-request", ""},
		{"unexpected error before writing is a 500", func(w http.ResponseWriter, r *http.Request) error {
			return errors.New("boom")
		}, false, 500, "Internal Error", "ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			r := httptest.NewRequest(http.MethodGet, "/2/x", nil)
			if tt.canceled {
				ctx, cancel := context.WithCancel(r.Context())
				cancel()
				r = r.WithContext(ctx)
			}
			rec := httptest.NewRecorder()
			Adapt(apierr.Writer{Logger: log}, log, tt.h).ServeHTTP(rec, r)
			if rec.Code != tt.status {
				t.Errorf("status %d, want %d", rec.Code, tt.status)
			}
			if tt.status < 400 && rec.Body.String() != tt.body {
				t.Errorf("body %q, want only %q", rec.Body.String(), tt.body)
			}
			if tt.status >= 400 && !strings.Contains(rec.Body.String(), tt.body) {
				t.Errorf("body %q, want it to contain %q", rec.Body.String(), tt.body)
			}
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			switch {
			case tt.level == "" && logs.Len() > 0:
				t.Errorf("logged %q, want nothing", logs.String())
			case tt.level != "" && (len(lines) != 1 || !strings.Contains(lines[0], "level="+tt.level)):
				t.Errorf("logged %q, want one %s record", logs.String(), tt.level)
			}
		})
	}
}
