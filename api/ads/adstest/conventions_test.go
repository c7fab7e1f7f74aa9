package adstest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/api/auth"
)

// TestTotalCountIsRateLimitedApart: with_total_count=true requests have a
// window of their own (200 per 15 minutes, scaled to 10 here); requests
// without it are not counted against it.
func TestTotalCountIsRateLimitedApart(t *testing.T) {
	s := adstest.New(t, adstest.Options{RateLimitScale: 0.05})
	alice := s.User(t, "alice")
	alice.Account(t)
	withTotal := url.Values{"with_total_count": {"true"}}
	for i := 0; i < 10; i++ {
		r := alice.Get(t, "/12/accounts", withTotal).Status(t, http.StatusOK)
		if r.Body["total_count"] != float64(1) {
			t.Fatalf("total_count %v, want 1", r.Body["total_count"])
		}
		if r.Header.Get("X-Rate-Limit-Limit") != "10" {
			t.Fatalf("x-rate-limit-limit %q, want 10", r.Header.Get("X-Rate-Limit-Limit"))
		}
	}
	r := alice.Get(t, "/12/accounts", withTotal)
	r.Fails(t, http.StatusTooManyRequests, "TOO_MANY_REQUESTS", "")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("429 without Retry-After")
	}
	plain := alice.Get(t, "/12/accounts", nil).Status(t, http.StatusOK)
	if _, ok := plain.Body["total_count"]; ok {
		t.Fatal("total_count without with_total_count=true")
	}
	if plain.Header.Get("X-Rate-Limit-Limit") != "" {
		t.Fatal("a request without with_total_count was counted")
	}
}

// TestUnknownAndRepeatedParameters: a parameter the endpoint does not take,
// or one sent twice (query and form included), is refused by name.
func TestUnknownAndRepeatedParameters(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	acct := alice.Account(t)
	alice.Get(t, "/12/accounts", url.Values{"cuont": {"5"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "cuont")
	alice.Get(t, "/12/accounts", url.Values{"count": {"5", "6"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "count")
	alice.Put(t, "/12/accounts/"+acct.ID, url.Values{"nmae": {"x"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "nmae")
	alice.Put(t, "/12/accounts/"+acct.ID+"?name=a", url.Values{"name": {"b"}}).Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", "name")
	if got := alice.Get(t, "/12/accounts/"+acct.ID, nil).Status(t, http.StatusOK).Data(t)["name"]; got != acct.Name {
		t.Fatalf("name %v after refused updates, want %q", got, acct.Name)
	}
}

// TestAccountQuotaIsChargedToItsUsersOnly: a limit counted per account
// (the users batches, 1500 a minute, scaled to 3 here) is not used up by
// callers the account refuses: their requests are 403 ACCOUNT_NOT_FOUND
// and cost the account nothing.
func TestAccountQuotaIsChargedToItsUsersOnly(t *testing.T) {
	s := adstest.New(t, adstest.Options{RateLimitScale: 0.002})
	alice, mallory := s.User(t, "alice"), s.User(t, "mallory")
	acct := alice.Account(t)
	list := alice.Post(t, "/12/accounts/"+acct.ID+"/do_not_reach_lists", url.Values{"description": {"q"}}).Status(t, http.StatusOK).Data(t)["id"].(string)
	path := "/12/batch/accounts/" + acct.ID + "/do_not_reach_lists/" + list + "/users"
	body := []map[string]any{{"operation_type": "Update", "params": map[string]any{"users": []map[string]any{
		{"email": []string{"973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b"}}}}}}
	for i := 0; i < 5; i++ {
		mallory.DoJSON(t, http.MethodPost, path, body).Fails(t, http.StatusForbidden, "ACCOUNT_NOT_FOUND", "")
	}
	for i := 0; i < 3; i++ {
		alice.DoJSON(t, http.MethodPost, path, body).Status(t, http.StatusOK)
	}
	alice.DoJSON(t, http.MethodPost, path, body).Fails(t, http.StatusTooManyRequests, "TOO_MANY_REQUESTS", "")
}

// TestLiteralSemicolonInSignedQuery: a client that signs a value holding
// ';' and sends the ';' unescaped (Go's net/url no longer takes ';' as a
// separator, so the query cannot be read) gets a 400 INVALID_PARAMETER
// naming the parameter and saying to escape it, in the ads envelope, not a
// 401 about the signature.
func TestLiteralSemicolonInSignedQuery(t *testing.T) {
	s := adstest.New(t)
	alice := s.User(t, "alice")
	for _, tt := range []struct{ name, signed, sent, param string }{
		{"in a value", "q=a%3Bb", "q=a;b", "q"},
		{"as a separator", "count=5%3Bq%3Dx", "count=5;q=x", "count"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, s.URL+"/12/accounts?"+tt.signed, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := auth.SignRequest(req, "", s.App.ConsumerKey, s.App.ConsumerSecret, alice.Token.Token, alice.Token.Secret, time.Now(), ""); err != nil {
				t.Fatal(err)
			}
			req.URL.RawQuery = tt.sent
			r := adstest.Send(t, req)
			r.Fails(t, http.StatusBadRequest, "INVALID_PARAMETER", tt.param)
			if msg := r.FirstError().Message; !strings.Contains(msg, "%3B") {
				t.Errorf("message %q does not say to escape ';' as %%3B", msg)
			}
		})
	}
}
