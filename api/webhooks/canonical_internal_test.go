package webhooks

import (
	"net/url"
	"testing"
)

// TestCanonicalQuery: names sorted, others ignored, each list as sent
// without repeats, empty lists dropped.
func TestCanonicalQuery(t *testing.T) {
	names := []string{"tweet.fields", "expansions", "user.fields", "media.fields"}
	for _, c := range []struct{ raw, want string }{
		{"", ""},
		{"backfill_minutes=2", ""},
		{"user.fields=username&expansions=author_id", "expansions=author_id&user.fields=username"},
		{"tweet.fields=lang,id,lang,created_at,id", "tweet.fields=lang,id,created_at"},
		{"tweet.fields=lang&tweet.fields=id,lang", "tweet.fields=lang,id"},
		{"media.fields=&expansions=,author_id,", "expansions=author_id"},
	} {
		v, err := url.ParseQuery(c.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonicalQuery(v, names); got != c.want {
			t.Errorf("%q: %q, want %q", c.raw, got, c.want)
		}
	}
}
