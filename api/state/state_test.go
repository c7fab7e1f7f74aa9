package state

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
)

// fakeResetter records the surfaces it was asked to reset.
type fakeResetter struct {
	got []string
	err error
}

func (f *fakeResetter) ResetState(_ context.Context, surfaces []string) (Result, error) {
	f.got = surfaces
	return Result{Surfaces: surfaces, Removed: map[string]int64{"posts": 3}, Cleared: []string{"rate-limits"}}, f.err
}

func TestHandler(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		body       string
		err        error
		wantStatus int
		wantReset  []string
		wantBody   string
	}{
		{"no body: everything", "", nil, 200, Surfaces, `"removed":{"posts":3}`},
		{"all", `{"surfaces":["all"]}`, nil, 200, Surfaces, `"cleared":["rate-limits"]`},
		{"two surfaces, sorted, once", `{"surfaces":["events","core","events"]}`, nil, 200, []string{"core", "events"}, `"surfaces":["core","events"]`},
		{"unknown surface", `{"surfaces":["tweets"]}`, nil, 400, nil, "tweets"},
		{"not JSON", `surfaces=core`, nil, 400, nil, "JSON object"},
		{"too large", `{"surfaces":["` + strings.Repeat("a", maxBody) + `"]}`, nil, 413, nil, ""},
		{"store failure", ``, errors.New("boom"), 500, Surfaces, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := &fakeResetter{err: tc.err}
			h := Handler(r, apierr.Writer{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/_aviary/state/reset", strings.NewReader(tc.body)))
			if rec.Code != tc.wantStatus || !strings.Contains(rec.Body.String(), tc.wantBody) {
				t.Errorf("answer %d %s, want %d with %q", rec.Code, rec.Body, tc.wantStatus, tc.wantBody)
			}
			if !slices.Equal(r.got, tc.wantReset) {
				t.Errorf("reset %v, want %v", r.got, tc.wantReset)
			}
		})
	}
}

func TestClearerApplies(t *testing.T) {
	t.Parallel()
	always := Clearer{Name: "rate-limits"}
	ads := Clearer{Name: "usage", Surfaces: []string{"ads"}}
	if !always.Applies([]string{"core"}) || !ads.Applies([]string{"ads", "core"}) || ads.Applies([]string{"core"}) {
		t.Error("Clearer.Applies disagrees with its surfaces")
	}
}
