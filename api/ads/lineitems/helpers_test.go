package lineitems_test

import (
	"net/url"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// env is one test's server, a caller with an account, a funding
// instrument and a LINE_ITEM-optimized campaign.
type env struct {
	s          *adstest.Server
	alice      *adstest.Caller
	acct       storage.AdAccount
	fundingID  string
	campaignID string
}

func newEnv(t testing.TB) env {
	t.Helper()
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	fi := factory.FundingInstrument(t, s.DB, acct.ID)
	return env{s: s, alice: alice, acct: acct, fundingID: fi, campaignID: factory.Campaign(t, s.DB, acct.ID, fi)}
}

func (e env) path(suffix string) string { return "/12/accounts/" + e.acct.ID + "/line_items" + suffix }

// baseParams are a valid create: an ENGAGEMENTS promoted-tweets line item.
func (e env) baseParams(campaignID string) url.Values {
	return url.Values{"campaign_id": {campaignID}, "objective": {"ENGAGEMENTS"}, "product_type": {"PROMOTED_TWEETS"},
		"placements": {"ALL_ON_SERVICE"}}
}

// with returns base overlaid with extra.
func with(base url.Values, extra url.Values) url.Values {
	out := url.Values{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// create posts a line item and returns its data.
func (e env) create(t testing.TB, params url.Values) map[string]any {
	t.Helper()
	return e.alice.Post(t, e.path(""), params).Status(t, 200).Data(t)
}

// count runs a count query on the test database.
func count(t testing.TB, s *adstest.Server, query string, args ...any) int {
	t.Helper()
	var n int
	s.Scan(t, query, args, &n)
	return n
}

// campaignOptimized makes a campaign of the account with
// budget_optimization CAMPAIGN.
func (e env) campaignOptimized(t testing.TB) string {
	t.Helper()
	id := factory.Campaign(t, e.s.DB, e.acct.ID, e.fundingID)
	e.s.Exec(t, `UPDATE campaigns SET budget_optimization = 'CAMPAIGN' WHERE id = $1`, id)
	return id
}

// hasError reports whether the reply's errors include code for param.
func hasError(r adstest.Reply, code, param string) bool {
	errs, _ := r.Body["errors"].([]any)
	for _, it := range errs {
		e, _ := it.(map[string]any)
		if e["code"] == code && e["parameter"] == param {
			return true
		}
	}
	return false
}
