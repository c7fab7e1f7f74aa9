package targeting_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// ownAudience inserts a live custom audience owned by accountID.
func ownAudience(t *testing.T, s *adstest.Server, accountID string) string {
	t.Helper()
	var id string
	s.Scan(t, `INSERT INTO custom_audiences (owner_account_id, name) VALUES ($1, 'audience') RETURNING id`, []any{accountID}, &id)
	return id
}

// TestAudienceCriteriaNeedAccess: an audience criterion needs a live
// audience the account owns or is granted (either level); after the grant
// is revoked new criteria are refused and the existing ones stay listed.
func TestAudienceCriteriaNeedAccess(t *testing.T) {
	s := adstest.New(t)
	alice, bob := s.User(t, "alice"), s.User(t, "bob")
	owner, peer := alice.Account(t), bob.Account(t)
	s.Exec(t, `UPDATE ad_accounts SET business_id = $2 WHERE id = $1`, peer.ID, owner.BusinessID)
	_, _, ownerLI := factory.AdsChain(t, s.DB, owner.ID)
	_, _, peerLI := factory.AdsChain(t, s.DB, peer.ID)
	aud := ownAudience(t, s, owner.ID)
	deleted := ownAudience(t, s, owner.ID)
	s.Exec(t, `UPDATE custom_audiences SET deleted = true WHERE id = $1`, deleted)
	peerBase := "/12/accounts/" + peer.ID + "/targeting_criteria"
	criterion := func(li, typ, value string) url.Values {
		return url.Values{"line_item_id": {li}, "targeting_type": {typ}, "targeting_value": {value}}
	}
	refused := []struct {
		name   string
		caller *adstest.Caller
		path   string
		params url.Values
	}{
		{"not granted", bob, peerBase, criterion(peerLI, "CUSTOM_AUDIENCE", aud)},
		{"not granted, expanded", bob, peerBase, criterion(peerLI, "custom_audience_expanded", aud)},
		{"no such audience", alice, "/12/accounts/" + owner.ID + "/targeting_criteria", criterion(ownerLI, "CUSTOM_AUDIENCE", "nosuchaudience")},
		{"deleted audience", alice, "/12/accounts/" + owner.ID + "/targeting_criteria", criterion(ownerLI, "CUSTOM_AUDIENCE", deleted)},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			tt.caller.Post(t, tt.path, tt.params).Fails(t, http.StatusNotFound, "TAILORED_AUDIENCE_NOT_FOUND", "targeting_value")
		})
	}
	alice.Post(t, "/12/accounts/"+owner.ID+"/targeting_criteria", criterion(ownerLI, "CUSTOM_AUDIENCE", aud)).Status(t, http.StatusOK)

	perms := "/5/accounts/" + owner.ID + "/tailored_audiences/" + aud + "/permissions"
	grant := alice.Post(t, perms, url.Values{"granted_account_id": {peer.ID}, "permission_level": {"READ_ONLY"}}).
		Status(t, http.StatusOK).Data(t)["id"].(string)
	kept := bob.Post(t, peerBase, criterion(peerLI, "CUSTOM_AUDIENCE", aud)).Status(t, http.StatusOK).Data(t)["id"].(string)
	alice.Delete(t, perms+"/"+grant, nil).Status(t, http.StatusOK)

	bob.Post(t, peerBase, criterion(peerLI, "CUSTOM_AUDIENCE_EXPANDED", aud)).Fails(t, http.StatusNotFound, "TAILORED_AUDIENCE_NOT_FOUND", "targeting_value")
	got := bob.Get(t, peerBase, url.Values{"line_item_ids": {peerLI}}).Status(t, http.StatusOK).List(t)
	if len(got) != 1 || got[0]["id"] != kept || got[0]["targeting_value"] != aud || got[0]["deleted"] != false {
		t.Fatalf("after revoke the grantee lists %v, want its criterion %s", got, kept)
	}
	bob.Get(t, peerBase+"/"+kept, nil).Status(t, http.StatusOK)
	// a non-audience type with the same value is not checked
	bob.Post(t, peerBase, criterion(peerLI, "INTEREST", aud)).Status(t, http.StatusOK)
}
