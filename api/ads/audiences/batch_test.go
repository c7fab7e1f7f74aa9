package audiences_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

// TestUsersBatchBadInput: every limit and malformed batch is refused as a
// whole with its code and the parameter it names, and nothing is recorded.
func TestUsersBatchBadInput(t *testing.T) {
	e := newEnv(t)
	good := digest("good@example.com")
	user := `{"email":["` + good + `"]}`
	withUser := func(u string) string {
		return `[{"operation_type":"Update","params":{"users":[` + user + `,` + u + `]}}]`
	}
	withParams := func(extra string) string {
		return `[{"operation_type":"Update","params":{"users":[` + user + `]` + extra + `}}]`
	}
	ops := func(n int) string {
		one := `{"operation_type":"Update","params":{"users":[` + user + `]}}`
		return "[" + strings.Repeat(one+",", n-1) + one + "]"
	}
	tests := []struct {
		name, body   string
		status       int
		code, param  string
		contentType  string
		extraHeaders []string
	}{
		{name: "plain-text email", body: withUser(`{"email":["jane@example.com"]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1].email[0]"},
		{name: "plain-text phone", body: withUser(`{"phone_number":["` + good + `","+15555550100"]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1].phone_number[1]"},
		{name: "digest too short", body: withUser(`{"handle":["` + good[:63] + `"]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1].handle[0]"},
		{name: "digest too long", body: withUser(`{"twitter_id":["` + good + `0"]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1].twitter_id[0]"},
		{name: "digest not hex", body: withUser(`{"device_id":["` + strings.Repeat("g", 64) + `"]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1].device_id[0]"},
		{name: "digest not a string", body: withUser(`{"email":[42]}`), code: "INVALID_PARAMETER", param: "body"},
		{name: "unknown identifier", body: withUser(`{"mail":["` + good + `"]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1].mail"},
		{name: "user without identifier", body: withUser(`{}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1]"},
		{name: "user with empty arrays", body: withUser(`{"email":[],"handle":[]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1]"},
		{name: "empty partner_user_id", body: withUser(`{"partner_user_id":[""]}`), code: "INVALID_PARAMETER", param: "operations[0].params.users[1].partner_user_id[0]"},
		{name: "unknown operation_type", body: `[{"operation_type":"Upsert","params":{"users":[` + user + `]}}]`, code: "INVALID_PARAMETER", param: "operations[0].operation_type"},
		{name: "missing operation_type", body: `[{"params":{"users":[` + user + `]}}]`, code: "MISSING_PARAMETER", param: "operations[0].operation_type"},
		{name: "missing params", body: `[{"operation_type":"Update"}]`, code: "MISSING_PARAMETER", param: "operations[0].params"},
		{name: "missing params.users", body: `[{"operation_type":"Update","params":{}}]`, code: "MISSING_PARAMETER", param: "operations[0].params.users"},
		{name: "empty params.users", body: `[{"operation_type":"Update","params":{"users":[]}}]`, code: "INVALID_PARAMETER", param: "operations[0].params.users"},
		{name: "error in a later operation", body: strings.Replace(ops(4), `"Update"`, `"Delete"`, 1)[:len(ops(4))-1] + `,{"operation_type":"Update","params":{"users":[{"email":["x"]}]}}]`,
			code: "INVALID_PARAMETER", param: "operations[4].params.users[0].email[0]"},
		{name: "unknown operation field", body: `[{"operation_type":"Update","params":{"users":[` + user + `]},"extra":1}]`, code: "INVALID_PARAMETER", param: "operations[0].extra"},
		{name: "unknown params field", body: withParams(`,"expiry":"2099-01-01T00:00:00Z"`), code: "INVALID_PARAMETER", param: "operations[0].params.expiry"},
		{name: "repeated field", body: withParams(`,"users":[]`), code: "INVALID_PARAMETER", param: "operations[0].params.users"},
		{name: "expires_at not ISO 8601", body: withParams(`,"expires_at":"tomorrow"`), code: "INVALID_PARAMETER", param: "operations[0].params.expires_at"},
		{name: "effective_at not ISO 8601", body: withParams(`,"effective_at":"05/15/2018"`), code: "INVALID_PARAMETER", param: "operations[0].params.effective_at"},
		{name: "expires_at in the past", body: withParams(`,"expires_at":"2020-01-01T00:00:00Z"`), code: "INVALID_PARAMETER", param: "operations[0].params.expires_at"},
		{name: "expires_at before effective_at", body: withParams(`,"effective_at":"2099-02-01T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"`), code: "INVALID_PARAMETER", param: "operations[0].params.expires_at"},
		{name: "expires_at equal to effective_at", body: withParams(`,"effective_at":"2099-01-01T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"`), code: "INVALID_PARAMETER", param: "operations[0].params.expires_at"},
		{name: "effective_at whose default expiry passed", body: withParams(`,"effective_at":"2018-05-15T00:00:00Z"`), code: "INVALID_PARAMETER", param: "operations[0].params.effective_at"},
		{name: "2501 operations", body: ops(2501), code: "INVALID_PARAMETER", param: "operations"},
		{name: "no operations", body: `[]`, code: "INVALID_PARAMETER", param: "operations"},
		{name: "an object, not an array", body: `{"operation_type":"Update"}`, code: "INVALID_PARAMETER", param: "body"},
		{name: "malformed JSON", body: `[{"operation_type":"Update",`, code: "INVALID_PARAMETER", param: "body"},
		{name: "trailing bytes", body: ops(1) + `]`, code: "INVALID_PARAMETER", param: "body"},
		{name: "text/plain", body: ops(1), contentType: "text/plain", status: http.StatusUnsupportedMediaType},
		{name: "form content type", body: ops(1), contentType: "application/x-www-form-urlencoded", status: http.StatusUnsupportedMediaType},
		{name: "no content type", body: ops(1), contentType: "-", status: http.StatusUnsupportedMediaType},
		{name: "5,000,001 bytes", body: ops(1)[:len(ops(1))-1] + strings.Repeat(" ", 5_000_001-len(ops(1))) + "]", status: http.StatusRequestEntityTooLarge},
		{name: "empty Idempotency-Key", body: ops(1), code: "INVALID_PARAMETER", param: "Idempotency-Key", extraHeaders: []string{"Idempotency-Key", ""}},
		{name: "two Idempotency-Keys", body: ops(1), code: "INVALID_PARAMETER", param: "Idempotency-Key",
			extraHeaders: []string{"Idempotency-Key", "a", "Idempotency-Key", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ct := tc.contentType
			switch ct {
			case "":
				ct = "application/json"
			case "-":
				ct = ""
			}
			if tc.name == "5,000,001 bytes" && len(tc.body) != 5_000_001 {
				t.Fatalf("body of %d bytes", len(tc.body))
			}
			r := e.post(t, e.owner, e.acct, e.audience, ct, []byte(tc.body), tc.extraHeaders...)
			status := tc.status
			if status == 0 {
				status = http.StatusBadRequest
			}
			if tc.code == "" {
				if r.Code != status {
					t.Fatalf("status %d, want %d: %s", r.Code, status, r.Raw)
				}
				return
			}
			r.Fails(t, status, tc.code, tc.param)
		})
	}
	if n := e.batches(t); n != 0 {
		t.Errorf("%d batches recorded by refused requests, want 0", n)
	}
	if size, members := e.size(t, e.audience); size != 0 || members != 0 {
		t.Errorf("audience_size %d, members %d after refused requests", size, members)
	}
}

// TestUsersBatchLimitsAccepted: exactly 2500 operations and a body of
// exactly 5,000,000 bytes are accepted.
func TestUsersBatchLimitsAccepted(t *testing.T) {
	e := newEnv(t)
	body := maxBatch(t, 2500, 5_000_000)
	r := e.post(t, e.owner, e.acct, e.audience, "application/json", body).Status(t, http.StatusOK)
	if n := len(r.List(t)); n != 2500 {
		t.Fatalf("%d data items, want 2500", n)
	}
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	want := int64(bytes.Count(body, []byte(`"email"`)))
	if size, members := e.size(t, e.audience); size != want || members != want {
		t.Errorf("audience_size %d, members %d; want %d", size, members, want)
	}
}

// TestUsersBatchRateLimit: 1500 requests per minute per account (scaled
// down to 3 here); beyond, 429.
func TestUsersBatchRateLimit(t *testing.T) {
	s := adstest.New(t, adstest.Options{RateLimitScale: 0.002})
	owner := s.User(t, "owner")
	e := &env{s: s, owner: owner, acct: owner.Account(t).ID}
	e.audience = e.create(t, owner, e.acct, "a")
	body := "[" + op("Update", emails("r", 1)) + "]"
	for i := range 3 {
		if r := e.postJSON(t, body); r.Code != http.StatusOK {
			t.Fatalf("request %d: %d %s", i, r.Code, r.Raw)
		}
	}
	e.postJSON(t, body).Fails(t, http.StatusTooManyRequests, "TOO_MANY_REQUESTS", "")
	if n := e.batches(t); n != 1 {
		t.Errorf("%d batches recorded, want 1 (three requests of one body)", n)
	}
}
