package donotreach_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A batch answers per operation in request order, echoing the list,
// expires_at, account and operation_type; the list is PROCESSING until
// the worker applies it, then counts each distinct identifier once, and
// Delete removes.
func TestDoNotReachBatchApplied(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	expires := inAMonth()
	a, b := digest("a@x.com"), digest("b@x.com")
	batch := []any{
		op("Update", map[string]any{"expires_at": expires, "users": []any{
			user([]string{a}, []string{digest("+1")}), user([]string{strings.ToUpper(b)}, nil)}}),
		op("Update", map[string]any{"expires_at": expires, "emails": []string{a, b, digest("c@x.com")}}),
	}
	r := f.alice.DoJSON(t, http.MethodPost, f.usersPath(), batch).Status(t, http.StatusOK)
	data := r.List(t)
	reqs, _ := r.Body["request"].([]any)
	if len(data) != 2 || len(reqs) != 2 {
		t.Fatalf("data %v request %v, want 2 items each", data, reqs)
	}
	for i, want := range []float64{2, 3} {
		if data[i]["success_count"] != want || data[i]["total_count"] != want {
			t.Errorf("data[%d] = %v, want counts %v", i, data[i], want)
		}
		req := reqs[i].(map[string]any)
		params := req["params"].(map[string]any)
		if req["operation_type"] != "Update" || params["do_not_reach_list_id"] != f.list || params["account_id"] != f.acct.ID ||
			params["expires_at"] != expires {
			t.Errorf("request[%d] = %v", i, req)
		}
	}
	d := f.get(t)
	if fmt.Sprint(d["reasons_not_targetable"]) != "[PROCESSING TOO_SMALL]" || d["list_size"] != float64(0) {
		t.Fatalf("before the worker: %v, want PROCESSING and list_size 0", d)
	}
	if n := f.applyQueued(t); n != 1 {
		t.Fatalf("%d tasks enqueued, want 1", n)
	}
	d = f.get(t)
	if fmt.Sprint(d["reasons_not_targetable"]) != "[TOO_SMALL]" || d["list_size"] != float64(4) {
		t.Fatalf("after the worker: %v, want TOO_SMALL and list_size 4 (a, b, c, +1)", d)
	}
	del := []any{op("Delete", map[string]any{"users": []any{user([]string{a}, []string{digest("+1")})}})}
	f.alice.DoJSON(t, http.MethodPost, f.usersPath(), del).Status(t, http.StatusOK)
	f.applyQueued(t)
	if size := f.get(t)["list_size"]; size != float64(2) {
		t.Fatalf("after Delete: list_size %v, want 2", size)
	}
}

// Without expires_at, users are kept 13 months.
func TestDoNotReachDefaultExpiry(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	before := time.Now().AddDate(0, 13, 0).Add(-time.Second)
	r := f.alice.DoJSON(t, http.MethodPost, f.usersPath(), []any{op("Update", map[string]any{
		"users": []any{user([]string{digest("a@x.com")}, nil)}})}).Status(t, http.StatusOK)
	after := time.Now().AddDate(0, 13, 0)
	reqs := r.Body["request"].([]any)
	echoed, err := time.Parse(time.RFC3339, reqs[0].(map[string]any)["params"].(map[string]any)["expires_at"].(string))
	if err != nil || echoed.Before(before.Truncate(time.Second)) || echoed.After(after) {
		t.Fatalf("expires_at %v (%v), want 13 months ahead (%v .. %v)", echoed, err, before, after)
	}
	f.applyQueued(t)
	var stored time.Time
	f.s.Scan(t, `SELECT expires_at FROM do_not_reach_entries WHERE list_id = $1`, []any{f.list}, &stored)
	if !stored.Equal(echoed) {
		t.Fatalf("entry expires at %v, want %v", stored, echoed)
	}
}

// A retried request (same body, or same Idempotency-Key) is recorded and
// applied once and answered the same; a key reused with another body is
// refused.
func TestDoNotReachRetryAppliedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	body, _ := json.Marshal([]any{op("Update", map[string]any{"users": []any{
		user([]string{digest("a@x.com"), digest("b@x.com")}, nil)}})})
	first := f.raw(t, f.usersPath(), "application/json", body).Status(t, http.StatusOK)
	again := f.raw(t, f.usersPath(), "application/json", body).Status(t, http.StatusOK)
	if first.Raw != again.Raw {
		t.Fatalf("retry answered %s, want %s", again.Raw, first.Raw)
	}
	keyed, _ := json.Marshal([]any{op("Update", map[string]any{"users": []any{user([]string{digest("c@x.com")}, nil)}})})
	f.raw(t, f.usersPath(), "application/json", keyed, "Idempotency-Key", "k1").Status(t, http.StatusOK)
	// The same key with another body (even other whitespace) is refused.
	f.raw(t, f.usersPath(), "application/json", append(keyed, ' '), "Idempotency-Key", "k1").
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "Idempotency-Key")
	f.raw(t, f.usersPath(), "application/json", keyed, "Idempotency-Key", "k1").Status(t, http.StatusOK)
	if n := f.batches(t); n != 2 {
		t.Fatalf("%d batches recorded, want 2", n)
	}
	f.applyQueued(t)
	// A retry after the batch was applied changes nothing either.
	f.raw(t, f.usersPath(), "application/json", body).Status(t, http.StatusOK)
	if n := f.applyQueued(t); n != 0 {
		t.Fatalf("retry of an applied batch enqueued %d tasks, want 0", n)
	}
	if size := f.get(t)["list_size"]; size != float64(3) {
		t.Fatalf("list_size %v, want 3", size)
	}
}

// Expired entries stop counting at once, before the cleanup removes
// them; at MinTargetableSize unexpired entries the list is targetable.
func TestDoNotReachExpiredStopCounting(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	emails := make([]string, 101)
	for i := range emails {
		emails[i] = digest(fmt.Sprintf("%d@x.com", i))
	}
	f.alice.DoJSON(t, http.MethodPost, f.usersPath(), []any{op("Update", map[string]any{"expires_at": inAMonth(), "emails": emails})}).
		Status(t, http.StatusOK)
	f.applyQueued(t)
	d := f.get(t)
	if d["list_size"] != float64(101) || d["targetable"] != true || fmt.Sprint(d["reasons_not_targetable"]) != "[]" {
		t.Fatalf("101 entries: %v, want targetable", d)
	}
	f.s.Exec(t, `UPDATE do_not_reach_entries SET expires_at = now() - interval '1 second'
		WHERE list_id = $1 AND member_key = ANY($2)`, f.list, []string{"e:" + emails[0], "e:" + emails[1]})
	d = f.get(t)
	if d["list_size"] != float64(99) || d["targetable"] != false || fmt.Sprint(d["reasons_not_targetable"]) != "[TOO_SMALL]" {
		t.Fatalf("2 expired: %v, want list_size 99, TOO_SMALL", d)
	}
}
