package adstest_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// wildcard matches a {path value} of a route pattern.
var wildcard = regexp.MustCompile(`\{[a-z_]+\}`)

// TestEveryAccountRouteHidesOtherAccounts calls every ads route that takes
// an account in its path, on both listeners, with (a) an account of another
// user, (b) an id no account has, (c) an account of the caller on the
// other listener, and requires the same answer for all three, 403
// ACCOUNT_NOT_FOUND, with nothing but the id differing: an account id
// cannot be probed. (DELETE /12/accounts/{account_id} is sandbox only: in
// production it answers ACTION_NOT_ALLOWED, whatever the id.)
func TestEveryAccountRouteHidesOtherAccounts(t *testing.T) {
	s := adstest.New(t)
	alice, mallory := s.User(t, "alice"), s.User(t, "mallory")
	checked := 0
	for _, sandbox := range []bool{false, true} {
		caller, other, onOtherSide := alice, mallory, alice.Sandbox()
		if sandbox {
			caller, other, onOtherSide = alice.Sandbox(), mallory.Sandbox(), alice
		}
		victim := caller.Account(t)
		factory.AdsChain(t, s.DB, victim.ID)
		own := onOtherSide.Account(t)
		for _, e := range s.Routes() {
			method, path, _ := strings.Cut(e.Pattern, " ")
			if !strings.Contains(path, "{account_id}") {
				continue
			}
			checked++
			want := "ACCOUNT_NOT_FOUND"
			if !sandbox && e.Pattern == "DELETE /12/accounts/{account_id}" {
				want = "ACTION_NOT_ALLOWED"
			}
			answers := map[string]string{}
			for _, tc := range []struct {
				who     *adstest.Caller
				account string
			}{{other, victim.ID}, {other, "nosuchaccount"}, {caller, own.ID}} {
				p := strings.ReplaceAll(path, "{account_id}", tc.account)
				p = wildcard.ReplaceAllString(p, "x1")
				r := tc.who.Do(t, method, p, url.Values{})
				r.Fails(t, http.StatusForbidden, want, "")
				answers[tc.account] = strings.ReplaceAll(r.Raw, tc.account, "ID")
			}
			if answers[victim.ID] != answers["nosuchaccount"] || answers[own.ID] != answers["nosuchaccount"] {
				t.Errorf("%s (sandbox %v): answers differ:\n%s\n%s\n%s", e.Pattern, sandbox, answers[victim.ID], answers["nosuchaccount"], answers[own.ID])
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d account routes checked", checked)
	}
}

// TestEveryRouteRefusesBearerTokens: the ads API takes OAuth 1.0a user
// context only.
func TestEveryRouteRefusesBearerTokens(t *testing.T) {
	s := adstest.New(t)
	for _, e := range s.Routes() {
		method, path, _ := strings.Cut(e.Pattern, " ")
		req, err := http.NewRequest(method, s.URL+wildcard.ReplaceAllString(path, "x1"), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", s.Bearer)
		adstest.Send(t, req).Fails(t, http.StatusForbidden, "UNAUTHORIZED_ACCESS", "")
	}
}

// TestEveryWritingRouteRefusesReadOnlyTokens: POST, PUT and DELETE need a
// read-write access token, refused before anything is read.
func TestEveryWritingRouteRefusesReadOnlyTokens(t *testing.T) {
	s := adstest.New(t)
	reader := s.ReadOnlyUser(t, "reader")
	acct := reader.Account(t)
	for _, e := range s.Routes() {
		method, path, _ := strings.Cut(e.Pattern, " ")
		if method == http.MethodGet {
			continue
		}
		p := wildcard.ReplaceAllString(strings.ReplaceAll(path, "{account_id}", acct.ID), "x1")
		reader.Do(t, method, p, url.Values{}).Fails(t, http.StatusForbidden, "READONLY_CLIENT_APPLICATION", "")
	}
}
