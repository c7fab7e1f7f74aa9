package streams_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/validation"
)

const rulesPath = "/2/tweets/search/stream/rules"

// setup runs the API with rule caps of 3 rules of 40 characters.
func setup(t *testing.T) *apitest.Bundle {
	t.Helper()
	return apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.Streams = streams.New(streams.Deps{Store: db, Validator: validation.New(), Logger: d.Logger, RulesMax: 3, RuleMaxLength: 40})
	})
}

// post sends a rules update as the app's bearer (or the other app's).
func post(t *testing.T, b *apitest.Bundle, bearer, query, body string) apitest.Reply {
	t.Helper()
	path := rulesPath
	if query != "" {
		path += "?" + query
	}
	var raw []byte
	if body != "" {
		raw = []byte(body)
	}
	r := b.Call(t, "POST", path, bearer, "application/json", raw)
	if err := apitest.ValidateResponse(t.Context(), apitest.OptionalOpenAPI(t), "POST", path, r); err != nil {
		t.Errorf("POST %s %s -> %d does not match the OpenAPI description: %v\n%s", path, body, r.Status, err, r.Raw)
	}
	return r
}

func list(t *testing.T, b *apitest.Bundle, bearer, query string) apitest.Reply {
	t.Helper()
	path := rulesPath
	if query != "" {
		path += "?" + query
	}
	r := b.Call(t, "GET", path, bearer, "", nil)
	if err := apitest.ValidateResponse(t.Context(), apitest.OptionalOpenAPI(t), "GET", path, r); err != nil {
		t.Errorf("GET %s -> %d does not match the OpenAPI description: %v\n%s", path, r.Status, err, r.Raw)
	}
	return r
}

func summary(r apitest.Reply) map[string]any {
	s, _ := apitest.Obj(r.Body, "meta", "summary").(map[string]any)
	return s
}

func sameSummary(got map[string]any, want map[string]int) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if n, ok := got[k].(float64); !ok || int(n) != v {
			return false
		}
	}
	return true
}

func values(r apitest.Reply) []string {
	data, _ := r.Body["data"].([]any)
	var out []string
	for _, d := range data {
		out = append(out, d.(map[string]any)["value"].(string))
	}
	return out
}

func errorTypes(r apitest.Reply) []string {
	errs, _ := r.Body["errors"].([]any)
	var out []string
	for _, e := range errs {
		out = append(out, strings.TrimPrefix(e.(map[string]any)["type"].(string), apitest.Problems))
	}
	return out
}

func TestAddListDeleteRules(t *testing.T) {
	t.Parallel()
	b := setup(t)

	r := post(t, b, b.Bearer, "", `{"add":[{"value":"cat has:media","tag":"cats"},{"value":"#meme"}]}`)
	if r.Status != 201 || !slices.Equal(values(r), []string{"cat has:media", "#meme"}) ||
		!sameSummary(summary(r), map[string]int{"created": 2, "not_created": 0, "valid": 2, "invalid": 0}) {
		t.Fatalf("add: %d %s", r.Status, r.Raw)
	}
	if sent, _ := apitest.Obj(r.Body, "meta", "sent").(string); !strings.HasSuffix(sent, "Z") {
		t.Errorf("meta.sent = %q", sent)
	}
	catID := apitest.Obj(r.Body, "data").([]any)[0].(map[string]any)["id"].(string)
	if tag := apitest.Obj(r.Body, "data").([]any)[0].(map[string]any)["tag"]; tag != "cats" {
		t.Errorf("tag = %v", tag)
	}

	// A duplicate is reported with the existing rule's id; the new one is created.
	r = post(t, b, b.Bearer, "", `{"add":[{"value":"cat has:media","tag":"again"},{"value":"dog"}]}`)
	if r.Status != 201 || !slices.Equal(values(r), []string{"dog"}) || !slices.Equal(errorTypes(r), []string{"duplicate-rules"}) ||
		!sameSummary(summary(r), map[string]int{"created": 1, "not_created": 1, "valid": 1, "invalid": 1}) {
		t.Fatalf("add with a duplicate: %d %s", r.Status, r.Raw)
	}
	dup := r.Body["errors"].([]any)[0].(map[string]any)
	if dup["id"] != catID || dup["value"] != "cat has:media" || dup["title"] != "DuplicateRule" {
		t.Errorf("duplicate problem = %v", dup)
	}
	// An add that creates nothing (only duplicates) is 200, not 201.
	if r := post(t, b, b.Bearer, "", `{"add":[{"value":"dog"}]}`); r.Status != 200 || len(values(r)) != 0 || !slices.Equal(errorTypes(r), []string{"duplicate-rules"}) {
		t.Errorf("add of a duplicate only: %d %s", r.Status, r.Raw)
	}

	// The other app sees none of them and may add the same value.
	if r := list(t, b, b.OtherBearer, ""); r.Status != 200 || len(values(r)) != 0 || apitest.Obj(r.Body, "meta", "result_count") != 0.0 {
		t.Errorf("other app's list: %d %s", r.Status, r.Raw)
	}
	if r := post(t, b, b.OtherBearer, "", `{"add":[{"value":"dog"}]}`); r.Status != 201 || len(values(r)) != 1 {
		t.Errorf("other app's add: %d %s", r.Status, r.Raw)
	}

	r = list(t, b, b.Bearer, "")
	if r.Status != 200 || !slices.Equal(values(r), []string{"cat has:media", "#meme", "dog"}) || apitest.Obj(r.Body, "meta", "result_count") != 3.0 {
		t.Fatalf("list: %d %s", r.Status, r.Raw)
	}
	// Pages of one, by ids.
	r = list(t, b, b.Bearer, "max_results=2")
	next, _ := apitest.Obj(r.Body, "meta", "next_token").(string)
	if len(values(r)) != 2 || len(next) != 16 {
		t.Fatalf("first page: %s", r.Raw)
	}
	if r := list(t, b, b.Bearer, "max_results=2&pagination_token="+next); !slices.Equal(values(r), []string{"dog"}) || apitest.Obj(r.Body, "meta", "next_token") != nil {
		t.Errorf("second page: %s", r.Raw)
	}
	if r := list(t, b, b.Bearer, "ids="+catID+",42"); !slices.Equal(values(r), []string{"cat has:media"}) {
		t.Errorf("by ids: %s", r.Raw)
	}
	if r := list(t, b, b.OtherBearer, "ids="+catID); len(values(r)) != 0 {
		t.Errorf("another app's rule by id: %s", r.Raw)
	}

	// The other app cannot delete this app's rule.
	if r := post(t, b, b.OtherBearer, "", `{"delete":{"ids":["`+catID+`"]}}`); !sameSummary(summary(r), map[string]int{"deleted": 0, "not_deleted": 1}) ||
		!slices.Equal(errorTypes(r), []string{"resource-not-found"}) {
		t.Errorf("other app's delete: %s", r.Raw)
	}
	// Dry run, then by id and value.
	body := `{"delete":{"ids":["` + catID + `","42"],"values":["dog"]}}`
	if r := post(t, b, b.Bearer, "dry_run=true", body); !sameSummary(summary(r), map[string]int{"deleted": 2, "not_deleted": 1}) {
		t.Errorf("dry delete: %s", r.Raw)
	}
	if r := list(t, b, b.Bearer, ""); len(values(r)) != 3 {
		t.Errorf("after a dry delete: %s", r.Raw)
	}
	if r := post(t, b, b.Bearer, "", body); r.Status != 200 || !sameSummary(summary(r), map[string]int{"deleted": 2, "not_deleted": 1}) {
		t.Errorf("delete: %d %s", r.Status, r.Raw)
	}
	if r := list(t, b, b.Bearer, ""); !slices.Equal(values(r), []string{"#meme"}) {
		t.Errorf("after delete: %s", r.Raw)
	}
	// delete_all, without a body.
	if r := post(t, b, b.Bearer, "delete_all=true", ""); r.Status != 200 || !sameSummary(summary(r), map[string]int{"deleted": 1, "not_deleted": 0}) {
		t.Errorf("delete all: %d %s", r.Status, r.Raw)
	}
	if r := list(t, b, b.OtherBearer, ""); len(values(r)) != 1 {
		t.Errorf("the other app's rules after delete_all: %s", r.Raw)
	}
}

func TestRefusedRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// One refused rule leaves the whole add uncreated.
	r := post(t, b, b.Bearer, "", `{"add":[{"value":"cat"},{"value":"(cat"},{"value":"has:media"},{"value":"`+strings.Repeat("a", 41)+`"}]}`)
	if r.Status != 200 || len(values(r)) != 0 || !slices.Equal(errorTypes(r), []string{"invalid-rules", "noncompliant-rules", "noncompliant-rules"}) ||
		!sameSummary(summary(r), map[string]int{"created": 0, "not_created": 4, "valid": 1, "invalid": 3}) {
		t.Fatalf("refused add: %d %s", r.Status, r.Raw)
	}
	first := r.Body["errors"].([]any)[0].(map[string]any)
	if first["value"] != "(cat" || first["title"] != "UnprocessableEntity" || len(first["details"].([]any)) != 1 {
		t.Errorf("invalid rule problem = %v", first)
	}
	if r := list(t, b, b.Bearer, ""); len(values(r)) != 0 {
		t.Errorf("rules after a refused add: %s", r.Raw)
	}
	// A dry run of good rules creates nothing.
	if r := post(t, b, b.Bearer, "dry_run=true", `{"add":[{"value":"a"},{"value":"b"}]}`); r.Status != 201 || len(values(r)) != 2 {
		t.Errorf("dry add: %s", r.Raw)
	}
	if r := list(t, b, b.Bearer, ""); len(values(r)) != 0 {
		t.Errorf("rules after a dry add: %s", r.Raw)
	}
	// The cap of 3: an add that would pass it adds nothing.
	post(t, b, b.Bearer, "", `{"add":[{"value":"a"},{"value":"b"}]}`)
	r = post(t, b, b.Bearer, "", `{"add":[{"value":"c"},{"value":"d"}]}`)
	if r.Status != 403 || r.Body["type"] != apitest.Problems+"rule-cap" {
		t.Errorf("over the cap: %d %s", r.Status, r.Raw)
	}
	if r := list(t, b, b.Bearer, ""); len(values(r)) != 2 {
		t.Errorf("rules after the cap: %s", r.Raw)
	}
}

func TestMalformedUpdates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct{ query, body string }{
		{"", `{}`},
		{"", `{"add":[]}`},
		{"", `{"add":[{"tag":"x"}]}`},
		{"", `{"add":[{"value":"a"}],"delete":{"ids":["1"]}}`},
		{"delete_all=true", `{"add":[{"value":"a"}]}`},
		{"", `{"delete":{}}`},
		{"", `{"delete":{"ids":["x1"]}}`},
		{"", `{"add":[{"value":"a","extra":1}]}`},
		{"dry_run=yes", `{"add":[{"value":"a"}]}`},
		{"", ``},
	} {
		r := post(t, b, b.Bearer, tc.query, tc.body)
		if r.Status != 400 || r.Body["type"] != apitest.Problems+"invalid-request" {
			t.Errorf("POST ?%s %s: %d %s", tc.query, tc.body, r.Status, r.Raw)
		}
	}
	for _, q := range []string{"max_results=0", "max_results=1001", "pagination_token=ABCDEFGHIJKLMNOP", "ids=x"} {
		if r := list(t, b, b.Bearer, q); r.Status != 400 {
			t.Errorf("GET ?%s: %d %s", q, r.Status, r.Raw)
		}
	}
	// User context is refused, as on the platform.
	if r := b.Call(t, "GET", rulesPath, "oauth:reader", "", nil); r.Status != 403 {
		t.Errorf("user context: %d %s", r.Status, r.Raw)
	}
	if r := b.Call(t, "GET", rulesPath, "", "", nil); r.Status != 401 {
		t.Errorf("no credentials: %d %s", r.Status, r.Raw)
	}
}

// Many rules list in pages that cover each once.
func TestListPages(t *testing.T) {
	t.Parallel()
	b := apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		d.Modules.Streams = streams.New(streams.Deps{Store: db, Validator: validation.New(), Logger: d.Logger})
	})
	var add []string
	for i := range 25 {
		add = append(add, fmt.Sprintf(`{"value":"word%d"}`, i))
	}
	if r := post(t, b, b.Bearer, "", `{"add":[`+strings.Join(add, ",")+`]}`); len(values(r)) != 25 {
		t.Fatalf("add: %s", r.Raw)
	}
	var seen []string
	q := "max_results=10"
	for range 5 {
		r := list(t, b, b.Bearer, q)
		seen = append(seen, values(r)...)
		next, _ := apitest.Obj(r.Body, "meta", "next_token").(string)
		if next == "" {
			break
		}
		q = "max_results=10&pagination_token=" + next
	}
	if len(seen) != 25 || seen[0] != "word0" || seen[24] != "word24" {
		t.Errorf("pages listed %v", seen)
	}
}

// TestRuleValuesTrimmed: white space around a value is not part of the
// rule: "cat " is stored as "cat", is a duplicate of it, and a delete by
// value " cat" finds it. Space inside the value is kept as written.
func TestRuleValuesTrimmed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := post(t, b, b.Bearer, "", `{"add":[{"value":" cat\t"},{"value":"cat  dog\n"}]}`)
	if r.Status != 201 || !slices.Equal(values(r), []string{"cat", "cat  dog"}) {
		t.Fatalf("add: %d %s", r.Status, r.Raw)
	}
	r = post(t, b, b.Bearer, "", `{"add":[{"value":"cat "}]}`)
	if r.Status != 200 || len(values(r)) != 0 || !slices.Equal(errorTypes(r), []string{"duplicate-rules"}) {
		t.Fatalf("add again with a space: %d %s", r.Status, r.Raw)
	}
	if r := post(t, b, b.Bearer, "", `{"add":[{"value":"   "}]}`); r.Status != 400 {
		t.Errorf("blank value: %d %s", r.Status, r.Raw)
	}
	r = post(t, b, b.Bearer, "", `{"delete":{"values":[" cat"]}}`)
	if r.Status != 200 || !sameSummary(summary(r), map[string]int{"deleted": 1, "not_deleted": 0}) {
		t.Fatalf("delete by value with a space: %d %s", r.Status, r.Raw)
	}
	if r := list(t, b, b.Bearer, ""); !slices.Equal(values(r), []string{"cat  dog"}) {
		t.Errorf("left: %s", r.Raw)
	}
}
