package permissions_test

import (
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
)

// audience inserts a live custom audience owned by accountID.
func audience(t *testing.T, s *adstest.Server, accountID string) string {
	t.Helper()
	var id string
	s.Scan(t, `INSERT INTO custom_audiences (owner_account_id, name) VALUES ($1, 'audience') RETURNING id`, []any{accountID}, &id)
	return id
}

// joinBusiness moves the accounts into the business of first.
func joinBusiness(t *testing.T, s *adstest.Server, first storage.AdAccount, others ...storage.AdAccount) {
	t.Helper()
	for _, a := range others {
		s.Exec(t, `UPDATE ad_accounts SET business_id = $2 WHERE id = $1`, a.ID, first.BusinessID)
	}
}

// grantFeature gives the account SHARE_AUDIENCE_OUTSIDE_BUSINESS.
func grantFeature(t *testing.T, s *adstest.Server, accountID string) {
	t.Helper()
	s.Exec(t, `INSERT INTO ad_account_features (account_id, feature) VALUES ($1, $2)`, accountID, storage.FeatureShareAudienceOutsideBusiness)
}

// permissionRows counts the audience's permission rows, revoked or not.
func permissionRows(t *testing.T, s *adstest.Server, audienceID string) int {
	t.Helper()
	var n int
	s.Scan(t, `SELECT count(*) FROM custom_audience_permissions WHERE custom_audience_id = $1`, []any{audienceID}, &n)
	return n
}

func permissionsPath(accountID, audienceID string) string {
	return "/5/accounts/" + accountID + "/tailored_audiences/" + audienceID + "/permissions"
}
