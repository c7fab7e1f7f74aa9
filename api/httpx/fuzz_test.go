package httpx

import (
	"errors"
	"maps"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/render"
)

// FuzzPageToken checks the core page tokens both ways:
//   - every key above 0 makes a 16-character token that ParsePageToken
//     reads back to the key;
//   - every token ParsePageToken accepts is the one PageToken makes of its
//     key (a token has one spelling: no other padding, line breaks or
//     trailing bits), and holds a key above 0.
//
// Crashers it finds are kept in testdata/fuzz/FuzzPageToken.
func FuzzPageToken(f *testing.F) {
	for _, k := range []int64{1, 2, 42, 1 << 31, 1334987486343299072, 1<<63 - 1} {
		f.Add(PageToken(k), k)
	}
	for _, s := range []string{"", "0000000000000000", "0000000000002===", "0000000000003===", "00000000000\n02===",
		"0000000000002", "zzzzzzzzzzzzzzzz", "VVVVVVVVVVVVU===", "G000000000000===", "0000000000002===0000000000002==="} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, tok string, k int64) {
		if k > 0 {
			s := PageToken(k)
			if len(s) != 16 {
				t.Fatalf("PageToken(%d) = %q: %d characters, want 16", k, s, len(s))
			}
			if got, ok := ParsePageToken(s); !ok || got != k {
				t.Fatalf("ParsePageToken(PageToken(%d) = %q) = %d, %v", k, s, got, ok)
			}
		}
		key, ok := ParsePageToken(tok)
		if !ok {
			return
		}
		if key <= 0 {
			t.Fatalf("ParsePageToken(%q) accepted key %d", tok, key)
		}
		if again := PageToken(key); again != tok {
			t.Fatalf("ParsePageToken(%q) = %d, whose token is %q: two spellings of one token", tok, key, again)
		}
	})
}

// fuzzEnum is the enum FuzzQuery's Enum getter takes.
var fuzzEnum = []string{"day", "hour", "minute"}

// FuzzQuery reads an arbitrary query string with every Query getter, the
// way the core endpoints do, and checks:
//   - the endpoint's parameter check (checkQuery) and the getters answer
//     nil or an *apierr.Error with a 4xx status: never an error the
//     writer would render as a 5xx;
//   - what a getter returns when no problem is recorded is valid: ids above
//     0, each once and printing back to the digits sent (leading zeros
//     aside); Int within bounds; Enum one of its values; Time in UTC and
//     re-reading as the same instant; List and the fields and expansions
//     of render.TweetOptions made only of allowed names, each once.
func FuzzQuery(f *testing.F) {
	for _, s := range []string{
		"", "ids=1,2,3", "ids=1,1,02", "ids=,", "ids=99999999999999999999", "ids=0", "id=1334987486343299072",
		"max_results=10", "max_results=-1", "max_results=+5", "max_results=1e3", "granularity=hour", "granularity=Hour",
		"start_time=2021-01-01T00:00:00Z", "start_time=2021-01-01T00:00:00.123456789+14:00", "start_time=yesterday",
		"tweet.fields=id,text,author_id", "tweet.fields=,,", "tweet.fields=", "post.fields=entities&tweet.fields=lang",
		"expansions=author_id,referenced_tweets.id", "expansions=attachments.media_keys&media.fields=url,variants",
		"user.fields=public_metrics&place.fields=geo&poll.fields=options", "x=%zz", "a=1;b=2", "ids=1&ids=2",
		"tweet.fields=id,id", "unknown=1", "ids=1%2C2", "%=1", "ids=\xff", "start_time=2021-02-30T00:00:00Z",
	} {
		f.Add(s)
	}
	known := map[string]bool{}
	params := append([]string{"ids", "id", "max_results", "granularity", "start_time", "fields"}, render.TweetParams...)
	for _, p := range params {
		known[p] = true
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		checkClientError(t, rawQuery, checkQuery(rawQuery, known, params))
		r := httptest.NewRequest("GET", "/2/tweets", nil)
		r.URL.RawQuery = rawQuery
		q := ReadQuery(r)
		ids := q.IDs("ids", 100, "ids")
		id := q.ID("id")
		n := q.Int("max_results", 10, 500, 10)
		enum := q.Enum("granularity", fuzzEnum, "hour")
		when, hasTime := q.Time("start_time")
		list := q.List("fields", fuzzEnum)
		checkClientError(t, rawQuery, q.Err())
		if q.Err() != nil {
			return
		}
		checkIDs(t, q, ids, id)
		if n < 10 || n > 500 || !slices.Contains(fuzzEnum, enum) {
			t.Fatalf("%q: Int %d or Enum %q outside their rule", rawQuery, n, enum)
		}
		if hasTime {
			again, err := time.Parse(time.RFC3339Nano, when.Format(time.RFC3339Nano))
			if err != nil || !again.Equal(when) || when.Location() != time.UTC {
				t.Fatalf("%q: Time %v does not read back (%v, %v)", rawQuery, when, again, err)
			}
		}
		checkNames(t, rawQuery, "fields", list, fuzzEnum)
		checkTweetOptions(t, rawQuery)
	})
}

// checkClientError fails unless err is nil or an *apierr.Error with a
// 4xx status.
func checkClientError(t *testing.T, input string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
		t.Fatalf("%q: error %T %v is not a 4xx *apierr.Error", input, err, err)
	}
}

// checkIDs checks the ids a clean query read.
func checkIDs(t *testing.T, q *Query, ids []int64, id int64) {
	t.Helper()
	for i, v := range ids {
		if v <= 0 || slices.Contains(ids[:i], v) {
			t.Fatalf("ids %v: %d is not a distinct id above 0", ids, v)
		}
	}
	if raw := q.Raw("id"); raw != "" && strconv.FormatInt(id, 10) != strings.TrimLeft(raw, "0") {
		t.Fatalf("id %q read as %d", raw, id)
	}
}

// checkNames checks that items are distinct names of allowed.
func checkNames(t *testing.T, input, param string, items, allowed []string) {
	t.Helper()
	for i, it := range items {
		if !slices.Contains(allowed, it) || slices.Contains(items[:i], it) {
			t.Fatalf("%q: %s holds %q, not a distinct allowed name: %q", input, param, it, items)
		}
	}
}

// checkTweetOptions reads the fields and expansions of an endpoint
// answering with posts the way api/objects does: a clean read holds only
// allowed names, and its canonical query (render.CanonicalQuery, what a
// webhook stream link stores) reads back to the same options.
func checkTweetOptions(t *testing.T, rawQuery string) {
	t.Helper()
	r := httptest.NewRequest("GET", "/2/tweets", nil)
	r.URL.RawQuery = rawQuery
	q := ReadQuery(r)
	lists := map[string][]string{}
	o := render.TweetOptions(func(param string, allowed []string) []string {
		items := q.List(param, allowed)
		lists[param] = allowed
		return items
	})
	if q.Err() != nil {
		checkClientError(t, rawQuery, q.Err())
		return
	}
	for param, allowed := range lists {
		if v := q.Raw(param); q.Has(param) {
			checkNames(t, rawQuery, param, strings.Split(v, ","), allowed)
		}
	}
	values, _ := apierr.ParseQuery(rawQuery)
	canonical := render.CanonicalQuery(values)
	again, err := render.ParseTweetQuery(canonical)
	if err != nil {
		t.Fatalf("%q: canonical query %q does not read back: %v", rawQuery, canonical, err)
	}
	if !sameOptions(o, again) {
		t.Fatalf("%q: options %+v, read back from %q as %+v", rawQuery, o, canonical, again)
	}
}

// sameOptions reports whether a and b show the same fields of every
// object and expand the same names.
func sameOptions(a, b render.Options) bool {
	for _, c := range []struct {
		x, y render.FieldSet
		obj  render.ObjectFields
	}{{a.Tweet, b.Tweet, render.TweetFields}, {a.User, b.User, render.UserFields}, {a.Media, b.Media, render.MediaFields}} {
		for _, name := range c.obj.Allowed {
			if c.x.Has(name) != c.y.Has(name) {
				return false
			}
		}
	}
	return maps.Equal(a.Expand, b.Expand)
}
