package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
)

// TestSignedRequirement: a public requirement lets a request through when
// its own check passes (with or without an Authorization header, which is
// not looked at) and stores no Principal; a failed check is rendered and
// the handler never runs. One without a check, or that also names
// credentials or writes, is a wiring bug.
func TestSignedRequirement(t *testing.T) {
	a := &Authenticator{}
	check := func(r *http.Request) error {
		if r.URL.Query().Get("sig") != "ok" {
			return apierr.Forbidden("bad signature")
		}
		return nil
	}
	calls := 0
	h := a.Middleware(Signed(check))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if _, ok := PrincipalFrom(r.Context()); ok {
			t.Error("a public endpoint got a Principal")
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	tests := []struct {
		target, authz string
		want          int
	}{
		{"/up?sig=ok", "", http.StatusNoContent},
		{"/up?sig=ok", "Bearer nope", http.StatusNoContent},
		{"/up?sig=ok", "Basic dXNlcjpwYXNz", http.StatusNoContent},
		{"/up?sig=no", "", http.StatusForbidden},
		{"/up", "Bearer nope", http.StatusForbidden},
	}
	for _, tc := range tests {
		r := httptest.NewRequest(http.MethodPut, tc.target, nil)
		if tc.authz != "" {
			r.Header.Set("Authorization", tc.authz)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != tc.want {
			t.Errorf("%s with Authorization %q: status %d, want %d", tc.target, tc.authz, rec.Code, tc.want)
		}
	}
	if calls != 3 {
		t.Errorf("handler ran %d times, want 3 (only for passing checks)", calls)
	}
	for name, req := range map[string]Requirement{
		"public without a check":  {Public: true},
		"public with credentials": {Public: true, Verify: check, Accept: []Credential{AppOnly}},
		"public that writes":      Signed(check).Writes(),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: Middleware accepted it", name)
				}
			}()
			a.Middleware(req)
		}()
	}
}
