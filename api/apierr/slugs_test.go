package apierr

import (
	"net/http"
	"testing"
)

// TestEverySpecSlugRenders checks that each slug of the spec has a
// constructor rendering its type URI and the fields the spec requires.
func TestEverySpecSlugRenders(t *testing.T) {
	tests := []struct {
		err      *Error
		slug     string
		required []string
	}{
		{ClientDisconnected(), SlugClientDisconnected, nil},
		{ClientForbidden("client-not-enrolled", "https://example.test/enroll"), SlugClientForbidden, []string{"reason", "registration_url"}},
		{Conflict("busy"), SlugConflict, nil},
		{DisallowedResource("1", "tweet", "data"), SlugDisallowedResource, []string{"resource_id", "resource_type", "section"}},
		{DuplicateRules("9", "cats"), SlugDuplicateRules, []string{"id", "value"}},
		{InvalidParam("x", "bad"), SlugInvalidRequest, []string{"errors"}},
		{InvalidRules("bad rule"), SlugInvalidRules, nil},
		{NoncompliantRules("too long"), SlugNoncompliantRules, nil},
		{NotAuthorizedForField("email", "user", "data"), SlugNotAuthorizedForField, []string{"field", "resource_type", "section"}},
		{NotAuthorizedForResource("tweet", "1", "no"), SlugNotAuthorizedForResource, []string{"resource_type", "resource_id"}},
		{OperationalDisconnect("deploy"), SlugOperationalDisconnect, nil},
		{NotFound("tweet", "id", "1"), SlugResourceNotFound, []string{"resource_type", "resource_id"}},
		{ResourceUnavailable("tweet", "1", "later"), SlugResourceUnavailable, []string{"resource_type", "resource_id"}},
		{RuleCap("max rules"), SlugRuleCap, nil},
		{StreamingConnection("too many"), SlugStreamingConnection, nil},
		{UnsupportedAuthentication("user context"), SlugUnsupportedAuthentication, nil},
		{UsageCapped(), SlugUsageCapped, []string{"period", "scope"}},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.slug, func(t *testing.T) {
			_, body := render(t, Writer{}, Core, "/2/x", tt.err)
			if body["type"] != DefaultProblemsBase+"/"+tt.slug || body["title"] == "" || body["detail"] == "" {
				t.Fatalf("problem %v", body)
			}
			for _, f := range tt.required {
				if body[f] == nil {
					t.Errorf("missing required field %s in %v", f, body)
				}
			}
			if tt.err.AdsCode == "" || tt.err.Status < http.StatusBadRequest {
				t.Errorf("incomplete catalogue entry %+v", tt.err)
			}
		})
		seen[tt.slug] = true
	}
	if len(seen) != 17 {
		t.Fatalf("the spec lists 17 slugs; covered %d", len(seen))
	}
}
