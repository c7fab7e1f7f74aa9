package streams_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/streams"
)

// Probes of the rules endpoints with hostile bodies: each must be a 4xx
// or a 200 with a proper answer, never a 500.
func TestHostileRuleBodies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	many := make([]string, 10000)
	for i := range many {
		many[i] = fmt.Sprintf(`{"value":"w%d"}`, i)
	}
	cases := []struct {
		name, query, body string
		want              int
	}{
		{"nul in tag", "", `{"add":[{"value":"cat","tag":"a\u0000b"}]}`, 400},
		{"nul in value", "", `{"add":[{"value":"c\u0000at"}]}`, 400},
		{"nul in delete value", "", `{"delete":{"values":["c\u0000at"]}}`, 400},
		{"lone surrogate in tag", "", `{"add":[{"value":"cat","tag":"\ud800"}]}`, 400},
		{"huge tag", "", `{"add":[{"value":"cat","tag":"` + strings.Repeat("t", 100000) + `"}]}`, 400},
		{"10000 rules", "", `{"add":[` + strings.Join(many, ",") + `]}`, 403},
		{"duplicate keys", "", `{"add":[{"value":"cat"}],"add":[{"value":"dog"}]}`, 400},
		{"add and delete", "", `{"add":[{"value":"cat"}],"delete":{"ids":["1"]}}`, 400},
		{"delete_all with add", "delete_all=true", `{"add":[{"value":"cat"}]}`, 400},
		{"delete empty", "", `{"delete":{}}`, 400},
		{"delete ids huge", "", `{"delete":{"ids":["99999999999999999999"]}}`, 400},
		{"delete ids negative", "", `{"delete":{"ids":["-1"]}}`, 400},
		{"delete id zero", "", `{"delete":{"ids":["0"]}}`, 400},
		{"dry_run=1", "dry_run=1", `{"add":[{"value":"cat"}]}`, 400},
		{"value number", "", `{"add":[{"value":5}]}`, 400},
		{"add object", "", `{"add":{"value":"cat"}}`, 400},
		{"array body", "", `[]`, 400},
		{"null body", "", `null`, 400},
		{"nested deep", "", `{"add":[{"value":"` + strings.Repeat("(", 500) + "a" + strings.Repeat(")", 500) + `"}]}`, 200},
		{"or negation", "", `{"add":[{"value":"-a OR -b"}]}`, 200},
		{"operator case", "", `{"add":[{"value":"FROM:jack"}]}`, 201}, // created
	}
	for _, c := range cases {
		r := post(t, b, b.Bearer, c.query, c.body)
		raw := r.Raw
		if len(raw) > 600 {
			raw = raw[:600]
		}
		t.Logf("%s -> %d %s", c.name, r.Status, raw)
		if r.Status != c.want {
			t.Errorf("%s: %d, want %d: %s", c.name, r.Status, c.want, raw)
		}
	}
	for _, q := range []string{"ids=0", "ids=-1", "ids=a", "ids=1,,2", "ids=" + strings.Repeat("1,", 1001) + "1", "max_results=0", "max_results=1001",
		"pagination_token=AAAAAAAAAAAAAAAA", "pagination_token=" + strings.Repeat("0", 16), "pagination_token=zzzz", "ids=1&ids=2"} {
		r := list(t, b, b.Bearer, q)
		raw := r.Raw
		if len(raw) > 400 {
			raw = raw[:400]
		}
		t.Logf("GET %s -> %d %s", q, r.Status, raw)
		if r.Status != 400 {
			t.Errorf("GET %s: %d, want 400", q, r.Status)
		}
	}
}

// TestHostileTagLength: a rule's tag is carried in every match on the bus
// (Redis, MAXLEN 100,000 entries), in the dispatcher's in-memory rule set
// and on every stream line: it is bounded (MaxTagLength characters), so
// one app cannot fill Redis with megabyte tags.
func TestHostileTagLength(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ok := strings.Repeat("é", streams.MaxTagLength)
	if r := post(t, b, b.Bearer, "", `{"add":[{"value":"cat","tag":"`+ok+`"}]}`); r.Status != 201 || len(values(r)) != 1 {
		t.Errorf("tag of %d characters: %d %s", streams.MaxTagLength, r.Status, r.Raw)
	}
	long := strings.Repeat("t", streams.MaxTagLength+1)
	r := post(t, b, b.Bearer, "", `{"add":[{"value":"dog","tag":"`+long+`"}]}`)
	if r.Status != 400 || r.Body["type"] != apitest.Problems+"invalid-request" {
		t.Errorf("tag of %d characters: %d %.300s", streams.MaxTagLength+1, r.Status, r.Raw)
	}
	if r := list(t, b, b.Bearer, ""); !slices.Equal(values(r), []string{"cat"}) {
		t.Errorf("rules: %s", r.Raw)
	}
}
