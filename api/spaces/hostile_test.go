package spaces_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
)

// TestHostileSpaceLookup: a Space whose host was suspended is not shown
// (a partial resource-not-found, nothing of the Space); ids are matched
// exactly (case counts); odd ids are 400 invalid-request, never a 500.
func TestHostileSpaceLookup(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	s, err := b.DB.StartSpace(ctx, b.Author.ID, "Secret chorus")
	if err != nil {
		t.Fatal(err)
	}
	flipped := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return r - 'a' + 'A'
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s.ID)
	if flipped != s.ID {
		if r := b.Get(t, "/2/spaces/"+flipped, b.Bearer); r.Body["data"] != nil {
			t.Errorf("case-flipped id %s found the Space: %s", flipped, r.Raw)
		}
	}
	for _, id := range []string{"12345678901234", "%C3%84bc", "a%20b", "a%2Fb", "%00"} {
		if r := b.Call(t, http.MethodGet, "/2/spaces/"+id, b.Bearer, "", nil); r.Status != http.StatusBadRequest ||
			r.Body["type"] != "https://api.x.com/2/problems/invalid-request" {
			t.Errorf("id %s: %d %s", id, r.Status, r.Raw)
		}
	}
	if _, err := b.DB.SetUserState(ctx, b.Author.ID, "suspended", time.Now()); err != nil {
		t.Fatal(err)
	}
	r := b.Get(t, "/2/spaces/"+s.ID+"?space.fields=title&expansions=host_ids", b.Bearer)
	if r.Status != http.StatusOK || r.Body["data"] != nil || r.Body["includes"] != nil || strings.Contains(r.Raw, "Secret chorus") ||
		apitest.Obj(r.Body, "errors") == nil {
		t.Errorf("a suspended host's Space = %d %s", r.Status, r.Raw)
	}
}
