package donotreach_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

// Create, list, get and delete: one live list per account, the object of
// the reference, soft delete, a second DELETE 404.
func TestDoNotReachListLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	d := f.get(t)
	want := map[string]any{"name": "Do Not Reach List", "description": "exclusions", "list_size": float64(0),
		"targetable": false, "deleted": false}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %v, want %v", k, d[k], v)
		}
	}
	if r := fmt.Sprint(d["reasons_not_targetable"]); r != "[TOO_SMALL]" {
		t.Errorf("reasons_not_targetable = %s, want [TOO_SMALL]", r)
	}
	f.alice.Post(t, listsPath(f.acct.ID), nil).Fails(t, http.StatusForbidden, "ACTION_NOT_ALLOWED", "")
	bad := []struct {
		name   string
		params url.Values
		code   string
		param  string
	}{
		{"description too long", url.Values{"description": {strings.Repeat("d", 201)}}, "INVALID_PARAMETER", "description"},
		{"empty description", url.Values{"description": {""}}, "INVALID_PARAMETER", "description"},
		{"name is not a parameter", url.Values{"name": {"x"}}, "INVALID_PARAMETER", "name"},
	}
	for _, tc := range bad {
		f.alice.Post(t, listsPath(f.acct.ID), tc.params).Fails(t, http.StatusBadRequest, tc.code, tc.param)
	}
	if items := f.alice.Get(t, listsPath(f.acct.ID), nil).Status(t, http.StatusOK).List(t); len(items) != 1 || items[0]["id"] != f.list {
		t.Fatalf("list = %v, want the one list", items)
	}
	del := f.alice.Delete(t, f.itemPath(), nil).Status(t, http.StatusOK).Data(t)
	if del["deleted"] != true || del["id"] != f.list {
		t.Fatalf("delete answered %v, want the list with deleted true", del)
	}
	f.alice.Delete(t, f.itemPath(), nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "do_not_reach_list_id")
	f.alice.Get(t, f.itemPath(), nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "do_not_reach_list_id")
	f.alice.Get(t, f.itemPath(), url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK)
	if items := f.alice.Get(t, listsPath(f.acct.ID), nil).Status(t, http.StatusOK).List(t); len(items) != 0 {
		t.Fatalf("list after delete = %v, want none", items)
	}
	if items := f.alice.Get(t, listsPath(f.acct.ID), url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK).List(t); len(items) != 1 {
		t.Fatalf("list with_deleted = %v, want the deleted list", items)
	}
	batch := []any{op("Update", map[string]any{"users": []any{user([]string{digest("a@x.com")}, nil)}})}
	f.alice.DoJSON(t, http.MethodPost, f.usersPath(), batch).Fails(t, http.StatusNotFound, "NOT_FOUND", "do_not_reach_list_id")
	f.alice.Post(t, listsPath(f.acct.ID), nil).Status(t, http.StatusOK)
}

// Another account's list answers exactly like a missing one, on every
// endpoint; another user's account is ACCOUNT_NOT_FOUND.
func TestDoNotReachTenancy(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	bob := f.s.User(t, "b")
	bobAcct := bob.Account(t)
	bobList := bob.Post(t, listsPath(bobAcct.ID), nil).Status(t, http.StatusOK).Data(t)["id"].(string)
	missing := "zzzzzz"
	batch := []any{op("Update", map[string]any{"users": []any{user([]string{digest("a@x.com")}, nil)}})}
	for _, id := range []string{bobList, missing} {
		item := listsPath(f.acct.ID) + "/" + id
		users := "/12/batch/accounts/" + f.acct.ID + "/do_not_reach_lists/" + id + "/users"
		replies := []adstest.Reply{
			f.alice.Get(t, item, nil),
			f.alice.Delete(t, item, nil),
			f.alice.DoJSON(t, http.MethodPost, users, batch),
		}
		for _, r := range replies {
			r.Fails(t, http.StatusNotFound, "NOT_FOUND", "do_not_reach_list_id")
			if msg := r.FirstError().Message; msg != "The do not reach list "+id+" does not exist" {
				t.Errorf("message %q differs from a missing list's", msg)
			}
		}
	}
	f.alice.Get(t, listsPath(bobAcct.ID)+"/"+bobList, nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	if bob.Get(t, listsPath(bobAcct.ID)+"/"+bobList, nil).Status(t, http.StatusOK).Data(t)["deleted"] != false {
		t.Fatal("bob's list was changed")
	}
}

// Every bad batch is rejected as a whole with the exact code and the
// operation and field it names; nothing is recorded.
func TestDoNotReachBatchBadInput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	good := func() map[string]any {
		return op("Update", map[string]any{"users": []any{user([]string{digest("a@x.com")}, []string{digest("+15555550100")})}})
	}
	many := make([]any, 2501)
	for i := range many {
		many[i] = good()
	}
	cases := []struct {
		name  string
		body  any
		code  string
		param string
	}{
		{"plain-text email", []any{op("Update", map[string]any{"users": []any{user([]string{"a@x.com"}, nil)}})},
			"INVALID_PARAMETER", "operations[0].params.users[0].email[0]"},
		{"short phone digest in the third operation", []any{good(), good(), op("Delete", map[string]any{"users": []any{
			user(nil, []string{digest("1")}), user([]string{digest("b")}, []string{digest("2")[:63]})}})},
			"INVALID_PARAMETER", "operations[2].params.users[1].phone_number[0]"},
		{"non-hex email digest", []any{op("Update", map[string]any{"users": []any{user([]string{strings.Repeat("g", 64)}, nil)}})},
			"INVALID_PARAMETER", "operations[0].params.users[0].email[0]"},
		{"bad digest in emails", []any{op("Update", map[string]any{"expires_at": inAMonth(), "emails": []string{digest("a"), "a@x.com"}})},
			"INVALID_PARAMETER", "operations[0].params.emails[1]"},
		{"unknown operation_type", []any{op("Upsert", map[string]any{"users": []any{user([]string{digest("a")}, nil)}})},
			"INVALID_PARAMETER", "operations[0].operation_type"},
		{"missing operation_type", []any{map[string]any{"params": map[string]any{"users": []any{user([]string{digest("a")}, nil)}}}},
			"MISSING_PARAMETER", "operations[0].operation_type"},
		{"missing params", []any{map[string]any{"operation_type": "Update"}}, "MISSING_PARAMETER", "operations[0].params"},
		{"missing users", []any{good(), op("Update", map[string]any{"expires_at": inAMonth()})}, "MISSING_PARAMETER", "operations[1].params.users"},
		{"empty users", []any{op("Update", map[string]any{"users": []any{}})}, "INVALID_PARAMETER", "operations[0].params.users"},
		{"user without identifiers", []any{op("Update", map[string]any{"users": []any{map[string]any{}}})},
			"INVALID_PARAMETER", "operations[0].params.users[0]"},
		{"users and emails", []any{op("Update", map[string]any{"expires_at": inAMonth(), "emails": []string{digest("a")},
			"users": []any{user([]string{digest("a")}, nil)}})}, "EXCLUSIVE_PARAMETERS", "operations[0].params.emails"},
		{"emails without expires_at", []any{op("Update", map[string]any{"emails": []string{digest("a")}})},
			"MISSING_PARAMETER", "operations[0].params.expires_at"},
		{"expires_at in the past", []any{op("Update", map[string]any{"expires_at": "2020-01-01T00:00:00Z",
			"users": []any{user([]string{digest("a")}, nil)}})}, "INVALID_PARAMETER", "operations[0].params.expires_at"},
		{"expires_at beyond 13 months", []any{op("Update", map[string]any{"expires_at": time.Now().AddDate(0, 14, 0).UTC().Format(time.RFC3339),
			"users": []any{user([]string{digest("a")}, nil)}})}, "INVALID_PARAMETER", "operations[0].params.expires_at"},
		{"expires_at not a time", []any{op("Update", map[string]any{"expires_at": "tomorrow",
			"users": []any{user([]string{digest("a")}, nil)}})}, "INVALID_PARAMETER", "operations[0].params.expires_at"},
		{"email not an array", []any{op("Update", map[string]any{"users": []any{map[string]any{"email": digest("a")}}})},
			"INVALID_PARAMETER", "operations[0].params.users.email"},
		{"effective_at is not taken", []any{op("Update", map[string]any{"effective_at": inAMonth(),
			"users": []any{user([]string{digest("a")}, nil)}})}, "INVALID_PARAMETER", "operations[0]"},
		{"an object, not an array", good(), "INVALID_PARAMETER", "operations"},
		{"no operations", []any{}, "INVALID_PARAMETER", "operations"},
		{"2501 operations", many, "INVALID_PARAMETER", "operations"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.alice.DoJSON(t, http.MethodPost, f.usersPath(), tc.body).Fails(t, http.StatusBadRequest, tc.code, tc.param)
		})
	}
	valid, _ := json.Marshal([]any{good()})
	f.raw(t, f.usersPath(), "application/x-www-form-urlencoded", valid).Fails(t, http.StatusUnsupportedMediaType, "INVALID_PARAMETER", "")
	f.raw(t, f.usersPath(), "", valid).Fails(t, http.StatusUnsupportedMediaType, "INVALID_PARAMETER", "")
	huge := append(append([]byte("["), valid[1:len(valid)-1]...), append(bytes.Repeat([]byte(" "), 5_000_001), ']')...)
	f.raw(t, f.usersPath(), "application/json", huge).Fails(t, http.StatusRequestEntityTooLarge, "INVALID_PARAMETER", "")
	f.raw(t, f.usersPath(), "application/json", valid, "Idempotency-Key", strings.Repeat("k", 256)).
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "Idempotency-Key")
	if n := f.batches(t); n != 0 {
		t.Fatalf("%d batches recorded by rejected requests, want 0", n)
	}
	if n := f.applyQueued(t); n != 0 {
		t.Fatalf("%d tasks enqueued by rejected requests, want 0", n)
	}
}

// The limits themselves pass: 2500 operations, a body of 5,000,000 bytes.
func TestDoNotReachBatchAtLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ops := make([]any, 2500)
	for i := range ops {
		ops[i] = op("Update", map[string]any{"users": []any{user([]string{digest(fmt.Sprint(i))}, nil)}})
	}
	r := f.alice.DoJSON(t, http.MethodPost, f.usersPath(), ops).Status(t, http.StatusOK)
	if n := len(r.List(t)); n != 2500 {
		t.Fatalf("%d data items, want 2500", n)
	}
	body, _ := json.Marshal([]any{op("Delete", map[string]any{"users": []any{user([]string{digest("x")}, nil)}})})
	exact := append(append([]byte("["), bytes.Repeat([]byte(" "), 5_000_000-len(body))...), body[1:]...)
	f.raw(t, f.usersPath(), "application/json", exact).Status(t, http.StatusOK)
	f.applyQueued(t)
	if size := f.get(t)["list_size"]; size != float64(2500) {
		t.Fatalf("list_size = %v, want 2500", size)
	}
}
