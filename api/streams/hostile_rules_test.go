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
	}{
		{"nul in tag", "", `{"add":[{"value":"cat","tag":"a\u0000b"}]}`},
		{"nul in value", "", `{"add":[{"value":"c\u0000at"}]}`},
		{"nul in delete value", "", `{"delete":{"values":["c\u0000at"]}}`},
		{"lone surrogate in tag", "", `{"add":[{"value":"cat","tag":"\ud800"}]}`},
		{"huge tag", "", `{"add":[{"value":"cat","tag":"` + strings.Repeat("t", 100000) + `"}]}`},
		{"10000 rules", "", `{"add":[` + strings.Join(many, ",") + `]}`},
		{"duplicate keys", "", `{"add":[{"value":"cat"}],"add":[{"value":"dog"}]}`},
		{"add and delete", "", `{"add":[{"value":"cat"}],"delete":{"ids":["1"]}}`},
		{"delete_all with add", "delete_all=true", `{"add":[{"value":"cat"}]}`},
		{"delete empty", "", `{"delete":{}}`},
		{"delete ids huge", "", `{"delete":{"ids":["99999999999999999999"]}}`},
		{"delete ids negative", "", `{"delete":{"ids":["-1"]}}`},
		{"delete id zero", "", `{"delete":{"ids":["0"]}}`},
		{"dry_run=1", "dry_run=1", `{"add":[{"value":"cat"}]}`},
		{"value number", "", `{"add":[{"value":5}]}`},
		{"add object", "", `{"add":{"value":"cat"}}`},
		{"array body", "", `[]`},
		{"null body", "", `null`},
		{"nested deep", "", `{"add":[{"value":"` + strings.Repeat("(", 500) + "a" + strings.Repeat(")", 500) + `"}]}`},
		{"or negation", "", `{"add":[{"value":"-a OR -b"}]}`},
		{"operator case", "", `{"add":[{"value":"FROM:jack"}]}`},
	}
	for _, c := range cases {
		r := post(t, b, b.Bearer, c.query, c.body)
		raw := r.Raw
		if len(raw) > 600 {
			raw = raw[:600]
		}
		t.Logf("%s -> %d %s", c.name, r.Status, raw)
		if r.Status >= 500 {
			t.Errorf("%s: %d %s", c.name, r.Status, raw)
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
		if r.Status >= 500 {
			t.Errorf("GET %s: %d", q, r.Status)
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
	if r := post(t, b, b.Bearer, "", `{"add":[{"value":"cat","tag":"`+ok+`"}]}`); r.Status != 200 || len(values(r)) != 1 {
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
