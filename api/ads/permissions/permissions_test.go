package permissions_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

// TestPermissionLifecycle: the owner shares an audience with an account
// of its business, lists the grant, revokes it (soft: deleted true), and a
// second revoke is a 404.
func TestPermissionLifecycle(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct, peer := alice.Account(t), bob.Account(t)
	joinBusiness(t, s, acct, peer)
	aud := audience(t, s, acct.ID)
	base := permissionsPath(acct.ID, aud)

	r := alice.Post(t, base, url.Values{"granted_account_id": {peer.ID}, "permission_level": {"READ_ONLY"}}).Status(t, http.StatusOK)
	d := r.Data(t)
	id, _ := d["id"].(string)
	if id == "" || d["tailored_audience_id"] != aud || d["granted_account_id"] != peer.ID || d["permission_level"] != "READ_ONLY" ||
		d["deleted"] != false || d["created_at"] == nil || d["updated_at"] == nil || len(d) != 7 {
		t.Fatalf("created %v", d)
	}
	params, _ := r.Body["request"].(map[string]any)["params"].(map[string]any)
	if params["account_id"] != acct.ID || params["tailored_audience_id"] != aud || params["granted_account_id"] != peer.ID || params["permission_level"] != "READ_ONLY" {
		t.Errorf("request.params = %v", params)
	}
	list := alice.Get(t, base, nil).Status(t, http.StatusOK)
	if got := list.List(t); len(got) != 1 || got[0]["id"] != id || list.Body["next_cursor"] != nil {
		t.Fatalf("list = %s", list.Raw)
	}
	gone := alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t)
	if gone["deleted"] != true || gone["id"] != id || gone["granted_account_id"] != peer.ID {
		t.Fatalf("revoke answered %v", gone)
	}
	alice.Delete(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "tailored_audience_permission_id")
	alice.Delete(t, base+"/nosuchgrant", nil).Fails(t, http.StatusNotFound, "NOT_FOUND", "tailored_audience_permission_id")
	if got := alice.Get(t, base, nil).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("a revoked grant is listed: %v", got)
	}
	again := alice.Post(t, base, url.Values{"granted_account_id": {peer.ID}, "permission_level": {"read_write"}}).Status(t, http.StatusOK).Data(t)
	if again["id"] == id || again["permission_level"] != "READ_WRITE" {
		t.Fatalf("grant after revoke = %v", again)
	}
}

// TestPermissionRejects: each refused grant names its parameter with the
// exact code and records nothing.
func TestPermissionRejects(t *testing.T) {
	s := adstest.New(t)
	alice, bob, carol := s.User(t, "alice"), s.User(t, "bob"), s.User(t, "carol")
	acct, peer, stranger := alice.Account(t), bob.Account(t), carol.Account(t)
	sandboxPeer := bob.Sandbox().Account(t)
	joinBusiness(t, s, acct, peer, sandboxPeer)
	deletedPeer := bob.Account(t)
	joinBusiness(t, s, acct, deletedPeer)
	s.Exec(t, `UPDATE ad_accounts SET deleted = true WHERE id = $1`, deletedPeer.ID)
	aud := audience(t, s, acct.ID)
	deletedAud := audience(t, s, acct.ID)
	s.Exec(t, `UPDATE custom_audiences SET deleted = true WHERE id = $1`, deletedAud)
	base := permissionsPath(acct.ID, aud)
	alice.Post(t, base, url.Values{"granted_account_id": {peer.ID}, "permission_level": {"READ_ONLY"}}).Status(t, http.StatusOK)

	valid := url.Values{"granted_account_id": {stranger.ID}, "permission_level": {"READ_WRITE"}}
	ok := func(kv ...string) url.Values { return adstest.With(valid, kv...) }
	tests := []struct {
		name   string
		path   string
		params url.Values
		status int
		code   string
		param  string
	}{
		{"missing granted account", base, ok("granted_account_id", ""), 400, "MISSING_PARAMETER", "granted_account_id"},
		{"missing level", base, ok("permission_level", ""), 400, "MISSING_PARAMETER", "permission_level"},
		{"unknown level", base, ok("permission_level", "OWNER"), 400, "INVALID_PARAMETER", "permission_level"},
		{"malformed account id", base, ok("granted_account_id", "a b"), 400, "INVALID_PARAMETER", "granted_account_id"},
		{"account id list", base, ok("granted_account_id", peer.ID+","+stranger.ID), 400, "INVALID_PARAMETER", "granted_account_id"},
		{"unknown parameter", base, ok("granted_account_ids", peer.ID), 400, "INVALID_PARAMETER", "granted_account_ids"},
		{"itself", base, ok("granted_account_id", acct.ID), 400, "INVALID_PARAMETER", "granted_account_id"},
		{"twice", base, ok("granted_account_id", peer.ID), 400, "INVALID_PARAMETER", "granted_account_id"},
		{"no such account", base, ok("granted_account_id", "nosuchaccount"), 404, "NOT_FOUND", "granted_account_id"},
		{"deleted account", base, ok("granted_account_id", deletedPeer.ID), 404, "NOT_FOUND", "granted_account_id"},
		{"sandbox account", base, ok("granted_account_id", sandboxPeer.ID), 404, "NOT_FOUND", "granted_account_id"},
		{"outside the business", base, valid, 403, "ACTION_NOT_ALLOWED", "granted_account_id"},
		{"no such audience", permissionsPath(acct.ID, "nosuchaudience"), valid, 404, "TAILORED_AUDIENCE_NOT_FOUND", "tailored_audience_id"},
		{"deleted audience", permissionsPath(acct.ID, deletedAud), valid, 404, "TAILORED_AUDIENCE_NOT_FOUND", "tailored_audience_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			alice.Post(t, tt.path, tt.params).Fails(t, tt.status, tt.code, tt.param)
		})
	}
	if n := permissionRows(t, s, aud) + permissionRows(t, s, deletedAud); n != 1 {
		t.Fatalf("refused grants left %d rows, want 1", n)
	}
	if msg := alice.Post(t, base, valid).FirstError().Message; !strings.Contains(msg, "SHARE_AUDIENCE_OUTSIDE_BUSINESS") {
		t.Errorf("outside-business refusal does not name the feature: %q", msg)
	}
	grantFeature(t, s, acct.ID)
	if d := alice.Post(t, base, valid).Status(t, http.StatusOK).Data(t); d["granted_account_id"] != stranger.ID {
		t.Fatalf("outside the business with the feature: %v", d)
	}
	// the feature is the owner's: the stranger may not share its own audience into alice's business
	theirs := audience(t, s, stranger.ID)
	carol.Post(t, permissionsPath(stranger.ID, theirs), url.Values{"granted_account_id": {acct.ID}, "permission_level": {"READ_ONLY"}}).
		Fails(t, http.StatusForbidden, "ACTION_NOT_ALLOWED", "granted_account_id")
}

// TestPermissionTenancy: an account that does not own the audience (a
// stranger, or even one holding a READ_WRITE grant) lists, shares and
// revokes with the same 404 as a missing audience, and changes nothing.
func TestPermissionTenancy(t *testing.T) {
	s := adstest.New(t)
	alice, bob, mallory := s.User(t, "alice"), s.User(t, "bob"), s.User(t, "mallory")
	acct, peer, other := alice.Account(t), bob.Account(t), mallory.Account(t)
	joinBusiness(t, s, acct, peer, other)
	aud := audience(t, s, acct.ID)
	grant := alice.Post(t, permissionsPath(acct.ID, aud), url.Values{"granted_account_id": {peer.ID}, "permission_level": {"READ_WRITE"}}).
		Status(t, http.StatusOK).Data(t)["id"].(string)
	share := url.Values{"granted_account_id": {other.ID}, "permission_level": {"READ_ONLY"}}
	for _, c := range []struct {
		name   string
		caller *adstest.Caller
		acct   string
	}{{"stranger", mallory, other.ID}, {"grantee", bob, peer.ID}} {
		requests := []struct {
			method, suffix string
			params         url.Values
		}{
			{http.MethodGet, "", nil},
			{http.MethodPost, "", share},
			{http.MethodDelete, "/" + grant, nil},
		}
		for _, rq := range requests {
			theirs := c.caller.Do(t, rq.method, permissionsPath(c.acct, aud)+rq.suffix, rq.params)
			theirs.Fails(t, http.StatusNotFound, "TAILORED_AUDIENCE_NOT_FOUND", "tailored_audience_id")
			none := c.caller.Do(t, rq.method, permissionsPath(c.acct, "nosuchaudience")+rq.suffix, rq.params)
			if strings.ReplaceAll(theirs.Raw, aud, "ID") != strings.ReplaceAll(none.Raw, "nosuchaudience", "ID") {
				t.Errorf("%s %s: answers differ:\n%s\n%s", c.name, rq.method, theirs.Raw, none.Raw)
			}
		}
		// the owner's account in the path is not theirs to use
		c.caller.Get(t, permissionsPath(acct.ID, aud), nil).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "account_id")
	}
	if got := alice.Get(t, permissionsPath(acct.ID, aud), nil).Status(t, http.StatusOK).List(t); len(got) != 1 || got[0]["deleted"] != false {
		t.Fatalf("after the refused requests the owner lists %v", got)
	}
	if n := permissionRows(t, s, aud); n != 1 {
		t.Fatalf("%d permission rows, want 1", n)
	}
}

// TestPermissionList: pages with count and cursor, total_count, filters,
// sort_by, and bad list input.
func TestPermissionList(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	acct := alice.Account(t)
	aud := audience(t, s, acct.ID)
	base := permissionsPath(acct.ID, aud)
	var ids, accounts []string
	for range 5 {
		peer := bob.Account(t)
		joinBusiness(t, s, acct, peer)
		d := alice.Post(t, base, url.Values{"granted_account_id": {peer.ID}, "permission_level": {"READ_ONLY"}}).Status(t, http.StatusOK).Data(t)
		ids, accounts = append(ids, d["id"].(string)), append(accounts, peer.ID)
	}
	alice.Delete(t, base+"/"+ids[4], nil).Status(t, http.StatusOK)
	live := ids[:4]

	var walked []string
	q := url.Values{"count": {"3"}}
	for page := 0; page < 5; page++ {
		r := alice.Get(t, base, q).Status(t, http.StatusOK)
		for _, it := range r.List(t) {
			walked = append(walked, it["id"].(string))
		}
		if r.NextCursor() == "" {
			break
		}
		q = url.Values{"count": {"3"}, "cursor": {r.NextCursor()}}
	}
	if !slices.Equal(walked, live) {
		t.Fatalf("walk = %v, want %v", walked, live)
	}
	total := alice.Get(t, base, url.Values{"with_total_count": {"true"}, "count": {"1"}}).Status(t, http.StatusOK)
	if total.Body["total_count"] != float64(4) || len(total.List(t)) != 1 {
		t.Fatalf("with_total_count = %s", total.Raw)
	}
	if r := alice.Get(t, base, nil).Status(t, http.StatusOK); r.Body["total_count"] != nil {
		t.Fatalf("total_count without asking: %s", r.Raw)
	}
	filtered := alice.Get(t, base, url.Values{"granted_account_ids": {accounts[1] + "," + accounts[4]}, "with_total_count": {"true"}}).Status(t, http.StatusOK)
	if got := filtered.List(t); len(got) != 1 || got[0]["id"] != ids[1] || filtered.Body["total_count"] != float64(1) {
		t.Fatalf("granted_account_ids filter = %s", filtered.Raw)
	}
	if got := alice.Get(t, base, url.Values{"tailored_audience_permission_ids": {ids[0] + "," + ids[2]}}).Status(t, http.StatusOK).List(t); len(got) != 2 || got[0]["id"] != ids[0] || got[1]["id"] != ids[2] {
		t.Fatalf("tailored_audience_permission_ids filter = %v", got)
	}
	desc := alice.Get(t, base, url.Values{"sort_by": {"granted_account_id-desc"}}).Status(t, http.StatusOK).List(t)
	for i := 1; i < len(desc); i++ {
		if desc[i-1]["granted_account_id"].(string) < desc[i]["granted_account_id"].(string) {
			t.Fatalf("sort_by granted_account_id-desc: %v", desc)
		}
	}
	tooMany := strings.TrimSuffix(strings.Repeat("a,", 201), ",")
	cursor := alice.Get(t, base, url.Values{"count": {"1"}}).NextCursor()
	bad := []struct {
		name   string
		params url.Values
		code   string
		param  string
	}{
		{"count zero", url.Values{"count": {"0"}}, "INVALID_PARAMETER", "count"},
		{"count too big", url.Values{"count": {"1001"}}, "INVALID_PARAMETER", "count"},
		{"too many accounts", url.Values{"granted_account_ids": {tooMany}}, "INVALID_PARAMETER", "granted_account_ids"},
		{"too many ids", url.Values{"tailored_audience_permission_ids": {tooMany}}, "INVALID_PARAMETER", "tailored_audience_permission_ids"},
		{"unknown sort", url.Values{"sort_by": {"name-asc"}}, "INVALID_PARAMETER", "sort_by"},
		{"forged cursor", url.Values{"cursor": {"abc.def"}}, "INVALID_PARAMETER", "cursor"},
		{"cursor with total", url.Values{"cursor": {cursor}, "with_total_count": {"true"}}, "EXCLUSIVE_PARAMETERS", "cursor"},
		{"with_deleted not taken", url.Values{"with_deleted": {"true"}}, "INVALID_PARAMETER", "with_deleted"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			alice.Get(t, base, tt.params).Fails(t, http.StatusBadRequest, tt.code, tt.param)
		})
	}
	// a cursor pages only the query it came from
	otherAud := audience(t, s, acct.ID)
	alice.Get(t, permissionsPath(acct.ID, otherAud), url.Values{"cursor": {cursor}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
}
