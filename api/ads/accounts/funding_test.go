package accounts_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
)

// TestSandboxFundingInstruments: the sandbox creates and deletes funding
// instruments with the reference's parameters; production refuses both.
func TestSandboxFundingInstruments(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice").Sandbox()
	acct := alice.Account(t)
	base := "/12/accounts/" + acct.ID + "/funding_instruments"
	valid := url.Values{"currency": {"EUR"}, "start_time": {"2026-07-10T00:00:00Z"}, "type": {"INSERTION_ORDER"},
		"end_time": {"2027-01-10T00:00:00Z"}, "funded_amount_local_micro": {"140000000000"}}
	bad := []struct {
		name        string
		change      url.Values
		drop        string
		code, param string
	}{
		{"currency missing", nil, "currency", "MISSING_PARAMETER", "currency"},
		{"currency lower case", url.Values{"currency": {"eur"}}, "", "INVALID_PARAMETER", "currency"},
		{"currency too long", url.Values{"currency": {"EURO"}}, "", "INVALID_PARAMETER", "currency"},
		{"type missing", nil, "type", "MISSING_PARAMETER", "type"},
		{"type unknown", url.Values{"type": {"GIFT_CARD"}}, "", "INVALID_PARAMETER", "type"},
		{"start missing", nil, "start_time", "MISSING_PARAMETER", "start_time"},
		{"start not a time", url.Values{"start_time": {"soon"}}, "", "INVALID_PARAMETER", "start_time"},
		{"end before start", url.Values{"end_time": {"2026-07-09T00:00:00Z"}}, "", "INVALID_PARAMETER", "end_time"},
		{"negative amount", url.Values{"funded_amount_local_micro": {"-1"}}, "", "INVALID_PARAMETER", "funded_amount_local_micro"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			params := url.Values{}
			for k, v := range valid {
				if k != tc.drop {
					params[k] = v
				}
			}
			for k, v := range tc.change {
				params[k] = v
			}
			alice.Post(t, base, params).Fails(t, http.StatusBadRequest, tc.code, tc.param)
		})
	}
	if n := len(alice.Get(t, base, nil).Status(t, http.StatusOK).List(t)); n != 0 {
		t.Fatalf("%d funding instruments after refused creates, want none", n)
	}
	fi := alice.Post(t, base, valid).Status(t, http.StatusOK).Data(t)
	if fi["currency"] != "EUR" || fi["type"] != "INSERTION_ORDER" || fi["entity_status"] != "ACTIVE" ||
		fi["start_time"] != "2026-07-10T00:00:00Z" || fi["end_time"] != "2027-01-10T00:00:00Z" ||
		fi["funded_amount_local_micro"] != float64(140000000000) || fi["deleted"] != false {
		t.Fatalf("created funding instrument %v", fi)
	}
	id := fi["id"].(string)
	gone := alice.Delete(t, base+"/"+id, nil).Status(t, http.StatusOK).Data(t)
	if gone["deleted"] != true || !strings.Contains(strings.Join(toStrings(gone["reasons_not_able_to_fund"]), ","), "DELETED") {
		t.Fatalf("deleted funding instrument %v", gone)
	}
	alice.Delete(t, base+"/"+id, nil).Fails(t, http.StatusNotFound, "FUNDING_INSTRUMENT_NOT_FOUND", "funding_instrument_id")

	prod := s.User(t, "bob")
	pacct := prod.Account(t)
	pbase := "/12/accounts/" + pacct.ID + "/funding_instruments"
	prod.Post(t, pbase, valid).Fails(t, http.StatusForbidden, "ACTION_NOT_ALLOWED", "")
	prod.Delete(t, pbase+"/x1", nil).Fails(t, http.StatusForbidden, "ACTION_NOT_ALLOWED", "")
}

func toStrings(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		s, _ := it.(string)
		out = append(out, s)
	}
	return out
}
