package httpx

import (
	"net/http"
	"testing"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/ratelimit"
)

// TestPublicEndpointNeedsPerResourceLimit: a public (signed-URL) endpoint
// has no caller to count, so it must be limited per resource; its rule
// carries the resource path value.
func TestPublicEndpointNeedsPerResourceLimit(t *testing.T) {
	nop := func(http.ResponseWriter, *http.Request) error { return nil }
	signed := auth.Signed(func(*http.Request) error { return nil })
	for name, limit := range map[string]Limit{
		"no limit": {},
		"per app":  {Name: "a", Requests: 1, Scope: PerApp},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: a public endpoint was wired", name)
				}
			}()
			newStack().Handler(Endpoint{Pattern: "PUT /x/{id}", Auth: signed, Limit: limit, Handle: nop})
		}()
	}
	s := newStack()
	s.Handler(Endpoint{Pattern: "PUT /x/{id}", Auth: signed, Handle: nop,
		Limit: Limit{Name: "x_upload", Requests: 3, Scope: PerResource, Resource: "id"}})
	rule, ok := s.Rules.Lookup("x_upload")
	if want := (ratelimit.Rule{Name: "x_upload", Limit: 3, Window: Window, Scope: ratelimit.PerResource, Resource: "id"}); !ok || rule != want {
		t.Errorf("registered rule %+v, want %+v", rule, want)
	}
}
