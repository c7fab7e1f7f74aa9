package permissions_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// target adds a criterion of typ targeting the audience to the line item.
func target(t *testing.T, s *adstest.Server, accountID, lineItemID, typ, audienceID string) string {
	t.Helper()
	var id string
	s.Scan(t, `INSERT INTO targeting_criteria (account_id, line_item_id, targeting_type, targeting_value)
		VALUES ($1, $2, $3, $4) RETURNING id`, []any{accountID, lineItemID, typ, audienceID}, &id)
	return id
}

// lineItems maps each line item id of a targeted entry to its servable flag.
func lineItems(entry map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, it := range entry["line_items"].([]any) {
		li := it.(map[string]any)
		out[li["id"].(string)] = li["servable"].(bool)
	}
	return out
}

// TestTargeted: the campaigns and line items of the account that target
// the audience through live criteria; with_active (default true) keeps
// servable line items (ACTIVE line item of an ACTIVE campaign) only.
func TestTargeted(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	aud := audience(t, s, acct.ID)
	fi, running, live := factory.AdsChain(t, s.DB, acct.ID)
	paused := factory.LineItem(t, s.DB, acct.ID, running)
	s.Exec(t, `UPDATE line_items SET entity_status = 'PAUSED' WHERE id = $1`, paused)
	untargeted := factory.LineItem(t, s.DB, acct.ID, running)
	stopped := factory.Campaign(t, s.DB, acct.ID, fi)
	s.Exec(t, `UPDATE campaigns SET entity_status = 'PAUSED' WHERE id = $1`, stopped)
	inStopped := factory.LineItem(t, s.DB, acct.ID, stopped)
	dropped := factory.Campaign(t, s.DB, acct.ID, fi)
	droppedLI := factory.LineItem(t, s.DB, acct.ID, dropped)
	deletedLI := factory.LineItem(t, s.DB, acct.ID, running)
	s.Exec(t, `UPDATE line_items SET deleted = true WHERE id = $1`, deletedLI)

	target(t, s, acct.ID, live, "CUSTOM_AUDIENCE", aud)
	target(t, s, acct.ID, paused, "CUSTOM_AUDIENCE_EXPANDED", aud)
	target(t, s, acct.ID, untargeted, "LOCATION", aud) // same value, not an audience type
	target(t, s, acct.ID, inStopped, "CUSTOM_AUDIENCE", aud)
	s.Exec(t, `UPDATE targeting_criteria SET deleted = true WHERE id = $1`, target(t, s, acct.ID, droppedLI, "CUSTOM_AUDIENCE", aud))
	target(t, s, acct.ID, deletedLI, "CUSTOM_AUDIENCE", aud)
	target(t, s, acct.ID, untargeted, "CUSTOM_AUDIENCE", audience(t, s, acct.ID)) // another audience

	path := "/12/accounts/" + acct.ID + "/custom_audiences/" + aud + "/targeted"
	campaignName := func(id string) string {
		var name string
		s.Scan(t, `SELECT name FROM campaigns WHERE id = $1`, []any{id}, &name)
		return name
	}
	tests := []struct {
		name   string
		params url.Values
		want   map[string]map[string]bool // campaign -> line item -> servable
	}{
		{"default", nil, map[string]map[string]bool{running: {live: true}}},
		{"with_active true", url.Values{"with_active": {"true"}}, map[string]map[string]bool{running: {live: true}}},
		{"with_active false", url.Values{"with_active": {"false"}}, map[string]map[string]bool{
			running: {live: true, paused: false}, stopped: {inStopped: false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := alice.Get(t, path, tt.params).Status(t, http.StatusOK)
			got := r.List(t)
			if len(got) != len(tt.want) || r.Body["next_cursor"] != nil {
				t.Fatalf("got %s", r.Raw)
			}
			for _, entry := range got {
				id := entry["campaign_id"].(string)
				lis := lineItems(entry)
				if entry["campaign_name"] != campaignName(id) || len(lis) != len(tt.want[id]) || len(entry) != 3 {
					t.Fatalf("entry %v, want line items %v", entry, tt.want[id])
				}
				for li, servable := range tt.want[id] {
					if s, ok := lis[li]; !ok || s != servable {
						t.Fatalf("campaign %s: line items %v, want %v", id, lis, tt.want[id])
					}
				}
			}
		})
	}
	alice.Get(t, path, url.Values{"with_active": {"maybe"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "with_active")
	alice.Get(t, path, url.Values{"count": {"0"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "count")
	alice.Get(t, path, url.Values{"with_total_count": {"true"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "with_total_count")
	alice.Get(t, path, url.Values{"cursor": {"abc.def"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
	if got := alice.Get(t, "/12/accounts/"+acct.ID+"/custom_audiences/"+audience(t, s, acct.ID)+"/targeted", nil).Status(t, http.StatusOK).List(t); len(got) != 0 {
		t.Fatalf("an untargeted audience lists %v", got)
	}
}

// TestTargetedAccess: the owner and a granted account list their own
// campaigns; a stranger, a revoked grantee and a deleted or missing
// audience get the same 404.
func TestTargetedAccess(t *testing.T) {
	s := adstest.New(t)
	alice, bob, mallory := s.User(t, "alice"), s.User(t, "bob"), s.User(t, "mallory")
	acct, peer, other := alice.Account(t), bob.Account(t), mallory.Account(t)
	joinBusiness(t, s, acct, peer)
	aud := audience(t, s, acct.ID)
	_, ownCampaign, ownLI := factory.AdsChain(t, s.DB, acct.ID)
	target(t, s, acct.ID, ownLI, "CUSTOM_AUDIENCE", aud)
	grant := alice.Post(t, permissionsPath(acct.ID, aud), url.Values{"granted_account_id": {peer.ID}, "permission_level": {"READ_ONLY"}}).
		Status(t, http.StatusOK).Data(t)["id"].(string)
	_, peerCampaign, peerLI := factory.AdsChain(t, s.DB, peer.ID)
	bob.Post(t, "/12/accounts/"+peer.ID+"/targeting_criteria", url.Values{"line_item_id": {peerLI},
		"targeting_type": {"CUSTOM_AUDIENCE"}, "targeting_value": {aud}}).Status(t, http.StatusOK)
	targeted := func(accountID, audienceID string) string {
		return "/12/accounts/" + accountID + "/custom_audiences/" + audienceID + "/targeted"
	}
	if got := alice.Get(t, targeted(acct.ID, aud), nil).Status(t, http.StatusOK).List(t); len(got) != 1 || got[0]["campaign_id"] != ownCampaign {
		t.Fatalf("owner lists %v", got)
	}
	if got := bob.Get(t, targeted(peer.ID, aud), nil).Status(t, http.StatusOK).List(t); len(got) != 1 || got[0]["campaign_id"] != peerCampaign {
		t.Fatalf("grantee lists %v", got)
	}
	none := mallory.Get(t, targeted(other.ID, "nosuchaudience"), nil)
	none.Fails(t, http.StatusNotFound, "TAILORED_AUDIENCE_NOT_FOUND", "custom_audience_id")
	same := func(who string, r adstest.Reply, accountID string) {
		t.Helper()
		r.Fails(t, http.StatusNotFound, "TAILORED_AUDIENCE_NOT_FOUND", "custom_audience_id")
		norm := strings.ReplaceAll(strings.ReplaceAll(r.Raw, aud, "AUD"), accountID, "ACCT")
		want := strings.ReplaceAll(strings.ReplaceAll(none.Raw, "nosuchaudience", "AUD"), other.ID, "ACCT")
		if norm != want {
			t.Errorf("%s: answers differ:\n%s\n%s", who, r.Raw, none.Raw)
		}
	}
	same("stranger", mallory.Get(t, targeted(other.ID, aud), nil), other.ID)
	alice.Delete(t, permissionsPath(acct.ID, aud)+"/"+grant, nil).Status(t, http.StatusOK)
	same("revoked grantee", bob.Get(t, targeted(peer.ID, aud), nil), peer.ID)
	s.Exec(t, `UPDATE custom_audiences SET deleted = true WHERE id = $1`, aud)
	same("owner of a deleted audience", alice.Get(t, targeted(acct.ID, aud), nil), acct.ID)
}

// TestTargetedPages: a page holds 200 campaigns by default (count to
// change it); the cursor walks the rest.
func TestTargetedPages(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	aud := audience(t, s, acct.ID)
	fi := factory.FundingInstrument(t, s.DB, acct.ID)
	s.Exec(t, `WITH c AS (
			INSERT INTO campaigns (account_id, funding_instrument_id, name, daily_budget_amount_local_micro)
			SELECT $1, $2, 'campaign '||g, 100000000 FROM generate_series(1, 201) g RETURNING id),
		li AS (
			INSERT INTO line_items (account_id, campaign_id, name, objective, product_type, placements, goal, bid_strategy)
			SELECT $1, c.id, 'line item', 'ENGAGEMENTS', 'PROMOTED_TWEETS', '{ALL_ON_SERVICE}', 'ENGAGEMENT', 'AUTO' FROM c RETURNING id)
		INSERT INTO targeting_criteria (account_id, line_item_id, targeting_type, targeting_value)
		SELECT $1, li.id, 'CUSTOM_AUDIENCE', $3 FROM li`, acct.ID, fi, aud)
	path := "/12/accounts/" + acct.ID + "/custom_audiences/" + aud + "/targeted"
	first := alice.Get(t, path, url.Values{"with_active": {"false"}}).Status(t, http.StatusOK)
	if len(first.List(t)) != 200 || first.NextCursor() == "" {
		t.Fatalf("first page: %d entries, cursor %q", len(first.List(t)), first.NextCursor())
	}
	seen := map[string]bool{}
	for _, e := range first.List(t) {
		seen[e["campaign_id"].(string)] = true
	}
	// the cursor belongs to its query: with_active=false
	alice.Get(t, path, url.Values{"cursor": {first.NextCursor()}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cursor")
	second := alice.Get(t, path, url.Values{"with_active": {"false"}, "cursor": {first.NextCursor()}}).Status(t, http.StatusOK)
	rest := second.List(t)
	if len(rest) != 1 || second.Body["next_cursor"] != nil || seen[rest[0]["campaign_id"].(string)] {
		t.Fatalf("second page: %s", second.Raw)
	}
	if params := second.Body["request"].(map[string]any)["params"].(map[string]any); params["cursor"] != first.NextCursor() {
		t.Errorf("request.params = %v", params)
	}
	walked := map[string]bool{}
	q := url.Values{"count": {"150"}}
	for pages := 1; ; pages++ {
		r := alice.Get(t, path, q).Status(t, http.StatusOK)
		for _, e := range r.List(t) {
			walked[e["campaign_id"].(string)] = true
		}
		if r.NextCursor() == "" {
			if pages != 2 || len(walked) != 201 {
				t.Fatalf("count=150 walk: %d pages, %d campaigns", pages, len(walked))
			}
			break
		}
		q = url.Values{"count": {"150"}, "cursor": {r.NextCursor()}}
	}
}
