package adstest_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

// refusal is a request the platform refuses: 400 with code, naming param,
// its message holding want (and not refute, when set).
type refusal struct {
	name         string
	caller       *adstest.Caller
	method, path string
	params       url.Values
	code, param  string
	want, refute string
}

// TestValuesThePlatformRefuses: values well formed for their type that
// name nothing real (a user that does not exist, a currency outside ISO
// 4217, an amount finer than the currency's minor unit, a targeting value
// outside its catalogue, a time offset of no place, an enum value out of
// the enum) are refused with 400 naming the parameter, changing nothing;
// each one's valid neighbour is taken.
func TestValuesThePlatformRefuses(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t).ID
	sandbox := alice.Sandbox()
	sandboxAcct := sandbox.Account(t).ID
	conn := s.SQL()
	jpy := sqlID(t, conn, `INSERT INTO funding_instruments (account_id, name, type, currency) VALUES ($1, 'yen', 'CREDIT_CARD', 'JPY') RETURNING id`, acct)
	zzz := sqlID(t, conn, `INSERT INTO funding_instruments (account_id, name, type, currency) VALUES ($1, 'zzz', 'CREDIT_CARD', 'ZZZ') RETURNING id`, acct)
	campaigns := "/12/accounts/" + acct + "/campaigns"
	yenCampaign := alice.Post(t, campaigns, url.Values{"funding_instrument_id": {jpy}, "name": {"yen"},
		"daily_budget_amount_local_micro": {"2000000"}}).Status(t, http.StatusOK).Data(t)["id"].(string)
	lineItems := "/12/accounts/" + acct + "/line_items"
	lineItem := url.Values{"campaign_id": {yenCampaign}, "objective": {"ENGAGEMENTS"}, "product_type": {"PROMOTED_TWEETS"},
		"placements": {"ALL_ON_SERVICE"}}
	li := alice.Post(t, lineItems, lineItem).Status(t, http.StatusOK).Data(t)["id"].(string)
	criteria := "/12/accounts/" + acct + "/targeting_criteria"
	criterion := func(typ, value string) url.Values {
		return url.Values{"line_item_id": {li}, "targeting_type": {typ}, "targeting_value": {value}}
	}
	funding := url.Values{"type": {"CREDIT_CARD"}, "start_time": {"2030-01-01T00:00:00Z"}}
	search := url.Values{"granularity": {"HOUR"}, "keywords": {"golang"}}
	const nobody = "999999999999"
	gone := s.User(t, "gone").User.ID
	s.Exec(t, `UPDATE users SET deleted_at = now() WHERE id = $1`, gone)
	cases := []refusal{
		{"advertiser_user_id of nobody", alice, "POST", lineItems, adstest.With(lineItem, "advertiser_user_id", nobody),
			"INVALID_PARAMETER", "advertiser_user_id", "not the id of a user", ""},
		{"advertiser_user_id of nobody (update)", alice, "PUT", lineItems + "/" + li, url.Values{"advertiser_user_id": {nobody}},
			"INVALID_PARAMETER", "advertiser_user_id", "not the id of a user", ""},
		{"advertiser_user_id of a deleted user", alice, "POST", lineItems, adstest.With(lineItem, "advertiser_user_id", fmt.Sprint(gone)),
			"INVALID_PARAMETER", "advertiser_user_id", "not the id of a user", ""},
		{"advertiser_user_id over int64", alice, "POST", lineItems, adstest.With(lineItem, "advertiser_user_id", "99999999999999999999"),
			"INVALID_PARAMETER", "advertiser_user_id", "not the id of a user", ""},
		{"currency ZZZ", sandbox, "POST", "/12/accounts/" + sandboxAcct + "/funding_instruments", adstest.With(funding, "currency", "ZZZ"),
			"INVALID_PARAMETER", "currency", "ISO 4217", ""},
		{"1.5 JPY of credit", sandbox, "POST", "/12/accounts/" + sandboxAcct + "/funding_instruments",
			adstest.With(funding, "currency", "JPY", "credit_limit_local_micro", "1500000"), "INVALID_PARAMETER", "credit_limit_local_micro", "no minor unit", ""},
		{"campaign on a ZZZ instrument", alice, "POST", campaigns, url.Values{"funding_instrument_id": {zzz}, "name": {"z"}},
			"INVALID_FUNDING_INSTRUMENT", "funding_instrument_id", "ISO 4217", ""},
		{"1.5 JPY daily budget", alice, "POST", campaigns, url.Values{"funding_instrument_id": {jpy}, "name": {"y"},
			"daily_budget_amount_local_micro": {"1500000"}}, "INVALID_PARAMETER", "daily_budget_amount_local_micro", "no minor unit", ""},
		{"1.5 JPY total budget (update)", alice, "PUT", campaigns + "/" + yenCampaign, url.Values{"total_budget_amount_local_micro": {"2500000"}},
			"INVALID_PARAMETER", "total_budget_amount_local_micro", "no minor unit", ""},
		{"1.5 JPY bid", alice, "POST", lineItems, adstest.With(lineItem, "bid_amount_local_micro", "1500000"),
			"INVALID_PARAMETER", "bid_amount_local_micro", "no minor unit", ""},
		{"1.5 JPY line item budget (update)", alice, "PUT", lineItems + "/" + li, url.Values{"total_budget_amount_local_micro": {"7500000"}},
			"INVALID_PARAMETER", "total_budget_amount_local_micro", "no minor unit", ""},
		{"age bucket AGE_OVER_9999", alice, "POST", criteria, criterion("AGE", "AGE_OVER_9999"), "INVALID_PARAMETER", "targeting_value", "age bucket", ""},
		{"location us", alice, "POST", criteria, criterion("LOCATION", "us"), "INVALID_PARAMETER", "targeting_value", "location", ""},
		{"location ZZ", alice, "POST", criteria, criterion("LOCATION", "ZZ"), "INVALID_PARAMETER", "targeting_value", "location", ""},
		{"insights start_time -24:00", alice, "GET", "/12/insights/keywords/search", adstest.With(search, "start_time", "2024-01-01T00:00:00-24:00"),
			"INVALID_PARAMETER", "start_time", "-24:00", ""},
		{"duration_in_days 99", alice, "POST", lineItems, adstest.With(lineItem, "frequency_cap", "2", "duration_in_days", "99"),
			"INVALID_PARAMETER", "duration_in_days", "[1, 7, 30]", "2147483647"},
		{"duration_in_days past int32", alice, "POST", lineItems, adstest.With(lineItem, "frequency_cap", "2", "duration_in_days", "4294967296"),
			"INVALID_PARAMETER", "duration_in_days", "[1, 7, 30]", "2147483647"},
		{"NUL in a name", alice, "POST", campaigns, url.Values{"funding_instrument_id": {jpy}, "name": {"a\x00b"}},
			"INVALID_PARAMETER", "name", "NUL", "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, conn, acct) + snapshot(t, conn, sandboxAcct)
			r := c.caller.Do(t, c.method, c.path, c.params)
			r.Fails(t, http.StatusBadRequest, c.code, c.param)
			msg := r.FirstError().Message
			if !strings.Contains(msg, c.want) || c.refute != "" && strings.Contains(msg, c.refute) {
				t.Errorf("message %q: want %q in it, not %q", msg, c.want, c.refute)
			}
			if snapshot(t, conn, acct)+snapshot(t, conn, sandboxAcct) != before {
				t.Errorf("refused, but an account changed")
			}
		})
	}
	// The neighbours are taken.
	alice.Post(t, lineItems, adstest.With(lineItem, "advertiser_user_id", fmt.Sprint(alice.User.ID), "bid_amount_local_micro", "3000000",
		"frequency_cap", "2", "duration_in_days", "7")).Status(t, http.StatusOK)
	sandbox.Post(t, "/12/accounts/"+sandboxAcct+"/funding_instruments", adstest.With(funding, "currency", "JPY",
		"credit_limit_local_micro", "2000000")).Status(t, http.StatusOK)
	sandbox.Post(t, "/12/accounts/"+sandboxAcct+"/funding_instruments", adstest.With(funding, "currency", "USD",
		"credit_limit_local_micro", "1500000")).Status(t, http.StatusOK)
	for _, v := range [][2]string{{"AGE", "AGE_OVER_18"}, {"LOCATION", "US"}, {"LOCATION", "5122804691e5fecc"}} {
		alice.Post(t, criteria, criterion(v[0], v[1])).Status(t, http.StatusOK)
	}
	alice.Get(t, "/12/insights/keywords/search", adstest.With(search, "start_time", "2024-01-01T00:00:00-12:00",
		"end_time", "2024-01-03T00:00:00+14:00")).Status(t, http.StatusOK)
}
