package search

import (
	"errors"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
)

// FuzzToken checks search and counts page tokens: every (kind, a, b)
// with b >= 0 encodes to a token that decodes to (a, b) for its kind
// only; any other string either decodes to values whose token decodes the
// same, or is refused as a 400 naming next_token (never another error).
func FuzzToken(f *testing.F) {
	f.Add(encodeToken(searchToken, 12, 1334987486343299072), int64(12), int64(1334987486343299072), false)
	f.Add(encodeToken(countToken, 1700000000000, 0), int64(-5), int64(0), true)
	for _, s := range []string{"", "!", "czo", "czoxOjI", "czowMTotMg", "Yzox", "czoxOjI6Mw", "czo6",
		"czowMToy", "czorMToy", "czoxOjAy"} { // s:01:2, s:+1:2, s:1:02: other spellings of s:1:2
		f.Add(s, int64(0), int64(0), false)
	}
	f.Fuzz(func(t *testing.T, raw string, a, b int64, counts bool) {
		kind := searchToken
		if counts {
			kind = countToken
		}
		if b >= 0 {
			tok := encodeToken(kind, a, b)
			if x, y, err := decode(tok, kind); err != nil || x != a || y != b {
				t.Fatalf("token %q of %d, %d decodes as %d, %d, %v", tok, a, b, x, y, err)
			}
		}
		x, y, err := decode(raw, kind)
		if err != nil {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("decodeToken(%q): %T %v, want a 400", raw, err, err)
			}
			return
		}
		if y < 0 {
			t.Fatalf("decodeToken(%q) = %d, %d", raw, x, y)
		}
		if tok := encodeToken(kind, x, y); tok != raw {
			t.Fatalf("decodeToken(%q) = %d, %d accepted another spelling of %q", raw, x, y, tok)
		}
	})
}

// decode runs decodeToken on a fresh query holding raw as next_token.
func decode(raw, kind string) (int64, int64, error) {
	r := httptest.NewRequest("GET", "/2/tweets/search/recent", nil)
	r.URL.RawQuery = "next_token=" + url.QueryEscape(raw)
	q := httpx.ReadQuery(r)
	x, y := decodeToken(raw, kind, q)
	return x, y, q.Err()
}
