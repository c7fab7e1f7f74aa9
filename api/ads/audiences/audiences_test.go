package audiences_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

func TestCustomAudienceLifecycle(t *testing.T) {
	e := newEnv(t)
	base := "/12/accounts/" + e.acct + "/custom_audiences"

	e.owner.Post(t, base, nil).Fails(t, http.StatusBadRequest, "MISSING_PARAMETER", "name")
	e.owner.Post(t, base, url.Values{"name": {"crm list"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "name")

	d := e.get(t, e.owner, e.acct, e.audience)
	want := map[string]any{"name": "crm list", "audience_type": "CRM", "partner_source": "OTHER", "owner_account_id": e.acct,
		"permission_level": "READ_WRITE", "is_owner": true, "audience_size": float64(0), "targetable": false, "deleted": false}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("%s = %v, want %v", k, d[k], v)
		}
	}
	if got := reasons(d); !slices.Equal(got, []string{"TOO_SMALL"}) {
		t.Errorf("reasons_not_targetable = %v, want [TOO_SMALL]", got)
	}

	d = e.owner.Put(t, e.path(e.acct, e.audience), url.Values{"name": {"renamed"}, "description": {"d"}}).Status(t, http.StatusOK).Data(t)
	if d["name"] != "renamed" || d["description"] != "d" {
		t.Errorf("after PUT: %v", d)
	}
	other := e.create(t, e.owner, e.acct, "second")
	list := e.owner.Get(t, base, url.Values{"q": {"REN"}}).Status(t, http.StatusOK).List(t)
	if len(list) != 1 || list[0]["id"] != e.audience {
		t.Errorf("q=REN lists %v, want only %s", list, e.audience)
	}
	list = e.owner.Get(t, base, url.Values{"custom_audience_ids": {other}}).Status(t, http.StatusOK).List(t)
	if len(list) != 1 || list[0]["id"] != other {
		t.Errorf("custom_audience_ids lists %v", list)
	}

	d = e.owner.Delete(t, e.path(e.acct, e.audience), nil).Status(t, http.StatusOK).Data(t)
	if d["deleted"] != true {
		t.Errorf("DELETE answered deleted=%v", d["deleted"])
	}
	e.owner.Delete(t, e.path(e.acct, e.audience), nil).Fails(t, http.StatusNotFound, "TAILORED_AUDIENCE_NOT_FOUND", "custom_audience_id")
	e.owner.Get(t, e.path(e.acct, e.audience), nil).Fails(t, http.StatusNotFound, "TAILORED_AUDIENCE_NOT_FOUND", "custom_audience_id")
	e.owner.Get(t, e.path(e.acct, e.audience), url.Values{"with_deleted": {"true"}}).Status(t, http.StatusOK)
	if n := len(e.owner.Get(t, base, nil).Status(t, http.StatusOK).List(t)); n != 1 {
		t.Errorf("list without deleted has %d audiences, want 1", n)
	}
}

// TestCustomAudienceSharing covers who sees and who may write an audience:
// the owner, a READ_WRITE grantee (may add users, not PUT or DELETE), a
// READ_ONLY grantee (reads only), an account without a grant (404 as for a
// missing id) and a revoked grant.
func TestCustomAudienceSharing(t *testing.T) {
	e := newEnv(t)
	reader := e.s.User(t, "reader")
	readerAcct := reader.Account(t).ID
	writer := e.s.User(t, "writer")
	writerAcct := writer.Account(t).ID
	stranger := e.s.User(t, "stranger")
	strangerAcct := stranger.Account(t).ID
	e.s.Exec(t, `INSERT INTO custom_audience_permissions (custom_audience_id, granted_account_id, permission_level) VALUES
		($1, $2, 'READ_ONLY'), ($1, $3, 'READ_WRITE')`, e.audience, readerAcct, writerAcct)
	body := []byte("[" + op("Update", emails("s", 2)) + "]")

	d := e.get(t, reader, readerAcct, e.audience)
	if d["permission_level"] != "READ_ONLY" || d["is_owner"] != false || d["owner_account_id"] != e.acct {
		t.Errorf("reader sees %v", d)
	}
	list := reader.Get(t, "/12/accounts/"+readerAcct+"/custom_audiences", nil).Status(t, http.StatusOK).List(t)
	if len(list) != 1 || list[0]["id"] != e.audience {
		t.Errorf("reader lists %v", list)
	}
	own := e.create(t, reader, readerAcct, "own")
	for scope, want := range map[string]string{"OWNER": own, "SHARED": e.audience} {
		l := reader.Get(t, "/12/accounts/"+readerAcct+"/custom_audiences", url.Values{"permission_scope": {scope}}).Status(t, http.StatusOK).List(t)
		if len(l) != 1 || l[0]["id"] != want {
			t.Errorf("permission_scope=%s lists %v, want %s", scope, l, want)
		}
	}

	tests := []struct {
		name   string
		do     func() adstest.Reply
		status int
		code   string
	}{
		{"reader PUT", func() adstest.Reply {
			return reader.Put(t, e.path(readerAcct, e.audience), url.Values{"name": {"x"}})
		}, 403, "ACTION_NOT_ALLOWED"},
		{"reader DELETE", func() adstest.Reply { return reader.Delete(t, e.path(readerAcct, e.audience), nil) }, 403, "ACTION_NOT_ALLOWED"},
		{"reader users", func() adstest.Reply {
			return e.post(t, reader, readerAcct, e.audience, "application/json", body)
		}, 403, "ACTION_NOT_ALLOWED"},
		{"writer PUT", func() adstest.Reply {
			return writer.Put(t, e.path(writerAcct, e.audience), url.Values{"name": {"x"}})
		}, 403, "ACTION_NOT_ALLOWED"},
		{"writer DELETE", func() adstest.Reply { return writer.Delete(t, e.path(writerAcct, e.audience), nil) }, 403, "ACTION_NOT_ALLOWED"},
		{"stranger GET", func() adstest.Reply { return stranger.Get(t, e.path(strangerAcct, e.audience), nil) }, 404, "TAILORED_AUDIENCE_NOT_FOUND"},
		{"stranger missing id", func() adstest.Reply { return stranger.Get(t, e.path(strangerAcct, "nosuchid"), nil) }, 404, "TAILORED_AUDIENCE_NOT_FOUND"},
		{"stranger PUT", func() adstest.Reply {
			return stranger.Put(t, e.path(strangerAcct, e.audience), url.Values{"name": {"x"}})
		}, 404, "TAILORED_AUDIENCE_NOT_FOUND"},
		{"stranger users", func() adstest.Reply {
			return e.post(t, stranger, strangerAcct, e.audience, "application/json", body)
		}, 404, "TAILORED_AUDIENCE_NOT_FOUND"},
		{"stranger users, no body", func() adstest.Reply {
			return e.post(t, stranger, strangerAcct, e.audience, "", nil)
		}, 404, "TAILORED_AUDIENCE_NOT_FOUND"},
		{"reader users, no body", func() adstest.Reply {
			return e.post(t, reader, readerAcct, e.audience, "", nil)
		}, 403, "ACTION_NOT_ALLOWED"},
		{"owner path of another account", func() adstest.Reply {
			return e.post(t, e.owner, e.acct, own, "application/json", body)
		}, 404, "TAILORED_AUDIENCE_NOT_FOUND"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.do().Fails(t, tc.status, tc.code, "")
		})
	}
	if n := e.batches(t); n != 0 {
		t.Fatalf("%d batches recorded by refused requests", n)
	}
	if d := e.get(t, e.owner, e.acct, e.audience); d["name"] != "crm list" || d["deleted"] != false {
		t.Errorf("audience changed by refused requests: %v", d)
	}

	e.post(t, writer, writerAcct, e.audience, "application/json", body).Status(t, http.StatusOK)
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	if size, _ := e.size(t, e.audience); size != 2 {
		t.Errorf("after the writer's batch audience_size = %d, want 2", size)
	}

	e.s.Exec(t, `UPDATE custom_audience_permissions SET deleted = true WHERE granted_account_id = $1`, writerAcct)
	writer.Get(t, e.path(writerAcct, e.audience), nil).Fails(t, 404, "TAILORED_AUDIENCE_NOT_FOUND", "custom_audience_id")
}

// TestUsersBatchReferenceExample sends the reference's example batch
// (expiry moved to the future; its handle 49e0be... is the reference's
// test vector, the SHA-256 of "adsapi") and checks the answer and the
// membership the worker leaves.
func TestUsersBatchReferenceExample(t *testing.T) {
	e := newEnv(t)
	if digest("adsapi") != "49e0be2aeccfb51a8dee4c945c8a70a9ac500cf6f5cb08112575f74db9b1470d" {
		t.Fatal("the reference's test vector does not hash as documented")
	}
	r := e.postJSON(t, strings.ReplaceAll(referenceExample, "2019-01-01T07:00:00Z", "2099-01-01T07:00:00Z")).Status(t, http.StatusOK)
	items := r.List(t)
	want := []map[string]any{
		{"operation_type": "Update", "success_count": float64(2), "total_count": float64(2)},
		{"operation_type": "Delete", "success_count": float64(2), "total_count": float64(2)},
	}
	for i := range want {
		for k, v := range want[i] {
			if items[i][k] != v {
				t.Errorf("data[%d].%s = %v, want %v", i, k, items[i][k], v)
			}
		}
	}
	params := r.Body["request"].(map[string]any)["params"].(map[string]any)
	if params["account_id"] != e.acct || params["custom_audience_id"] != e.audience {
		t.Errorf("request.params = %v", params)
	}
	if got := reasons(e.get(t, e.owner, e.acct, e.audience)); !slices.Contains(got, "PROCESSING") {
		t.Errorf("before the worker reasons_not_targetable = %v, want PROCESSING", got)
	}
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	// Update adds 2 people of 3 identifiers each; Delete names an email of
	// each, which removes both people with all their identifiers (its
	// other identifiers were never members).
	if size, rows := e.size(t, e.audience); size != 0 || rows != 0 {
		t.Errorf("audience_size %d, identifier rows %d; want 0, 0", size, rows)
	}
	if got := reasons(e.get(t, e.owner, e.acct, e.audience)); !slices.Equal(got, []string{"TOO_SMALL"}) {
		t.Errorf("after the worker reasons_not_targetable = %v, want [TOO_SMALL]", got)
	}

	// As published (expires_at in 2019) the example is refused.
	e.postJSON(t, referenceExample).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "operations[0].params.expires_at")
}

// TestUsersBatchCountsPeople: audience_size counts user objects (people),
// not identifiers: a user with an email and a phone number is one member,
// the same batch again (a new request) changes nothing, a later user
// sharing an identifier is that member, one sharing identifiers with two
// members merges them, and a Delete naming any identifier of a member
// removes it.
func TestUsersBatchCountsPeople(t *testing.T) {
	e := newEnv(t)
	user := func(fields ...string) string {
		var parts []string
		for i := 0; i+1 < len(fields); i += 2 {
			parts = append(parts, fmt.Sprintf(`%q:[%q]`, fields[i], digest(fields[i+1])))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	steps := []struct {
		name       string
		body       string
		size, rows int64
	}{
		{"email and phone", "[" + op("Update", "["+user("email", "jane@example.com", "phone_number", "+15555550100")+"]") + "]", 1, 2},
		{"the same batch again", "[" + op("Update", "["+user("email", "jane@example.com", "phone_number", "+15555550100")+"]") + "]", 1, 2},
		{"a later user sharing the phone", "[" + op("Update", "["+user("phone_number", "+15555550100", "handle", "jane")+"]") + "]", 1, 3},
		{"another person", "[" + op("Update", "["+user("email", "joe@example.com")+"]") + "]", 2, 4},
		{"a user joining both", "[" + op("Update", "["+user("handle", "jane", "email", "joe@example.com")+"]") + "]", 1, 4},
		{"a Delete naming one identifier", "[" + op("Delete", "["+user("email", "joe@example.com")+"]") + "]", 0, 0},
	}
	for i, st := range steps {
		e.postJSON(t, st.body, "Idempotency-Key", fmt.Sprint("step-", i)).Status(t, http.StatusOK)
		if errs := e.applyPending(t); len(errs) > 0 {
			t.Fatalf("%s: apply: %v", st.name, errs)
		}
		size, rows := e.size(t, e.audience)
		shown := e.get(t, e.owner, e.acct, e.audience)["audience_size"]
		if size != st.size || rows != st.rows || shown != float64(st.size) {
			t.Errorf("%s: audience_size %d (shown %v), identifier rows %d; want %d, %d", st.name, size, shown, rows, st.size, st.rows)
		}
	}
}

func TestUsersBatchIdempotent(t *testing.T) {
	e := newEnv(t)
	body := "[" + op("Update", emails("a", 3)) + "," + op("Update", emails("b", 2)) + "]"
	first := e.postJSON(t, body).Status(t, http.StatusOK).Raw
	if again := e.postJSON(t, body).Status(t, http.StatusOK).Raw; again != first {
		t.Errorf("the same body again answered %s, want %s", again, first)
	}
	if n := e.batches(t); n != 1 {
		t.Fatalf("%d batches recorded for one body sent twice, want 1", n)
	}
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	if size, _ := e.size(t, e.audience); size != 5 {
		t.Fatalf("audience_size %d, want 5", size)
	}
	// The task delivered again (a retry after the commit): applied once.
	var id string
	e.s.Scan(t, `SELECT id FROM custom_audience_batches`, nil, &id)
	if err := e.apply(t, id); err != nil {
		t.Fatalf("second run: %v", err)
	}
	e.postJSON(t, body).Status(t, http.StatusOK)
	if size, members := e.size(t, e.audience); size != 5 || members != 5 {
		t.Errorf("after a retried task and a retried request audience_size %d, members %d; want 5, 5", size, members)
	}

	// The same Idempotency-Key again is the first request; with another
	// body it is refused, naming the header, and records nothing.
	keyed := e.postJSON(t, "["+op("Delete", emails("a", 3))+"]", "Idempotency-Key", "k-1").Status(t, http.StatusOK).Raw
	retried := e.postJSON(t, "["+op("Delete", emails("a", 3))+"]", "Idempotency-Key", "k-1").Status(t, http.StatusOK).Raw
	if keyed != retried || !strings.Contains(keyed, `"success_count":3`) {
		t.Errorf("Idempotency-Key retry answered %s, want %s", retried, keyed)
	}
	e.postJSON(t, "["+op("Delete", emails("a", 1))+"]", "Idempotency-Key", "k-1").
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "Idempotency-Key")
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	if size, _ := e.size(t, e.audience); size != 2 {
		t.Errorf("after the keyed Delete audience_size %d, want 2", size)
	}
	if n := e.batches(t); n != 2 {
		t.Errorf("%d batches, want 2", n)
	}
}

// TestAudienceUsersBatchKeyPerAccount: an Idempotency-Key names a request of one
// account: the owner and a READ_WRITE grantee sending the same key each
// get their own batch, answered and applied; each account's retry is its
// own batch again.
func TestAudienceUsersBatchKeyPerAccount(t *testing.T) {
	e := newEnv(t)
	writer := e.s.User(t, "writer")
	writerAcct := writer.Account(t).ID
	e.s.Exec(t, `INSERT INTO custom_audience_permissions (custom_audience_id, granted_account_id, permission_level)
		VALUES ($1, $2, 'READ_WRITE')`, e.audience, writerAcct)
	ownerBody := "[" + op("Update", emails("o", 3)) + "]"
	writerBody := "[" + op("Update", emails("w", 2)) + "]"
	owner := e.postJSON(t, ownerBody, "Idempotency-Key", "shared").Status(t, http.StatusOK).Raw
	fromWriter := e.post(t, writer, writerAcct, e.audience, "application/json", []byte(writerBody), "Idempotency-Key", "shared").
		Status(t, http.StatusOK).Raw
	if !strings.Contains(owner, `"success_count":3`) || !strings.Contains(fromWriter, `"success_count":2`) {
		t.Errorf("owner answered %s, writer %s; want 3 and 2 users", owner, fromWriter)
	}
	// The writer's retry is its own batch, the same body under the owner's
	// key another request of the writer.
	again := e.post(t, writer, writerAcct, e.audience, "application/json", []byte(writerBody), "Idempotency-Key", "shared").
		Status(t, http.StatusOK).Raw
	if again != fromWriter {
		t.Errorf("writer's retry answered %s, want %s", again, fromWriter)
	}
	e.post(t, writer, writerAcct, e.audience, "application/json", []byte(ownerBody), "Idempotency-Key", "shared").
		Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "Idempotency-Key")
	if n := e.batches(t); n != 2 {
		t.Fatalf("%d batches, want one per account", n)
	}
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	if size, members := e.size(t, e.audience); size != 5 || members != 5 {
		t.Errorf("audience_size %d, members %d; want 5, 5 (both batches applied)", size, members)
	}
}

// TestAudienceUsersBatchRetryWindow: without a key, the same body is a retry only
// of the audience's latest batch and only within 24 hours: Update X,
// Delete X, Update X again re-adds X; the same body a day later is a new
// batch. A key is a retry for 24 hours too, then free for another body.
func TestAudienceUsersBatchRetryWindow(t *testing.T) {
	e := newEnv(t)
	update, del := "["+op("Update", emails("x", 1))+"]", "["+op("Delete", emails("x", 1))+"]"
	for i, body := range []string{update, del, update} {
		e.postJSON(t, body).Status(t, http.StatusOK)
		if errs := e.applyPending(t); len(errs) > 0 {
			t.Fatalf("apply: %v", errs)
		}
		want := int64(1 - i%2)
		if size, members := e.size(t, e.audience); size != want || members != want {
			t.Fatalf("after request %d audience_size %d, members %d; want %d", i, size, members, want)
		}
	}
	if n := e.batches(t); n != 3 {
		t.Fatalf("%d batches for Update, Delete, Update, want 3", n)
	}
	e.postJSON(t, update).Status(t, http.StatusOK)
	if n := e.batches(t); n != 3 {
		t.Fatalf("the latest body again recorded a batch (%d), want a retry", n)
	}

	e.s.Exec(t, `UPDATE custom_audience_batches SET created_at = created_at - interval '25 hours'`)
	e.postJSON(t, update).Status(t, http.StatusOK)
	if n := e.batches(t); n != 4 {
		t.Fatalf("the same body after 24 hours: %d batches, want 4", n)
	}

	e.postJSON(t, del, "Idempotency-Key", "day").Status(t, http.StatusOK)
	e.postJSON(t, update, "Idempotency-Key", "day").Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "Idempotency-Key")
	e.s.Exec(t, `UPDATE custom_audience_batches SET created_at = created_at - interval '25 hours'`)
	e.postJSON(t, update, "Idempotency-Key", "day").Status(t, http.StatusOK)
	if n := e.batches(t); n != 6 {
		t.Fatalf("a key reused after 24 hours: %d batches, want 6", n)
	}
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	if size, members := e.size(t, e.audience); size != 1 || members != 1 {
		t.Errorf("audience_size %d, members %d; want 1", size, members)
	}
}

// TestProcessingThenTargetable: PROCESSING while the batch waits, then
// targetable once 100 members are in; one removed makes it TOO_SMALL.
func TestProcessingThenTargetable(t *testing.T) {
	e := newEnv(t)
	e.postJSON(t, "["+op("Update", emails("t", 100))+"]").Status(t, http.StatusOK)
	d := e.get(t, e.owner, e.acct, e.audience)
	if got := reasons(d); !slices.Equal(got, []string{"PROCESSING", "TOO_SMALL"}) || d["targetable"] != false {
		t.Errorf("pending: reasons %v targetable %v", got, d["targetable"])
	}
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	d = e.get(t, e.owner, e.acct, e.audience)
	if got := reasons(d); len(got) != 0 || d["targetable"] != true || d["audience_size"] != float64(100) {
		t.Errorf("applied: reasons %v targetable %v size %v", got, d["targetable"], d["audience_size"])
	}
	e.postJSON(t, "["+op("Delete", emails("t", 1))+"]").Status(t, http.StatusOK)
	if errs := e.applyPending(t); len(errs) > 0 {
		t.Fatalf("apply: %v", errs)
	}
	d = e.get(t, e.owner, e.acct, e.audience)
	if got := reasons(d); !slices.Equal(got, []string{"TOO_SMALL"}) || d["audience_size"] != float64(99) {
		t.Errorf("after a delete: reasons %v size %v", got, d["audience_size"])
	}
}

// referenceExample is the reference's example request body.
const referenceExample = `[
  {"operation_type": "Update", "params": {"effective_at": "2018-05-15T00:00:00Z", "expires_at": "2019-01-01T07:00:00Z",
    "users": [
      {"email": ["4798b8bbdcf6f2a52e527f46a3d7a7c9aefb541afda03af79c74809ecc6376f3"],
       "handle": ["7352f353c460e74c7ae226952d04f8aa307b12329c5512ec8cb6f1a0f8f9b2cb", "49e0be2aeccfb51a8dee4c945c8a70a9ac500cf6f5cb08112575f74db9b1470d"]},
      {"email": ["5bf13d5ad4200407c5bc8b9bb578e425d05ef936fd488e3799a9d0806669223c"],
       "twitter_id": ["34d56c7159a7eea941f359653029410f813f65a1d2d13ecc5ccbdd5a8cb755cf", "00e7b76c9739dec57f4c4a20ec021a20ffcf26bd00f519b17ea00f0ed6048f85"]}]}},
  {"operation_type": "Delete", "params": {"effective_at": "2018-05-15T00:00:00Z", "expires_at": "2019-01-01T07:00:00Z",
    "users": [
      {"device_id": ["8d969eef6ecad3c29a3a629280e686cf0c3f5d5a86aff3ca12020c923adc6c92"],
       "email": ["4798b8bbdcf6f2a52e527f46a3d7a7c9aefb541afda03af79c74809ecc6376f3"],
       "handle": ["461222f5dd690a20651c3d19848015cb0369db3f8e937571ffb775de70750847"],
       "twitter_id": ["c623c7e163984493b46c547088542e95d0aaa529bc52bbecce3ff91eb6b7843b"]},
      {"email": ["5bf13d5ad4200407c5bc8b9bb578e425d05ef936fd488e3799a9d0806669223c"],
       "twitter_id": ["858cdc7f313f84a3f3c48e9a6323307c1ef1bb7439b8e3623e140454b0fd8fa5", "bb074e154657b91d99bd1bb3757409149670e8ae7a0fe9136fae29a26a7881c8"]}]}}
]`
