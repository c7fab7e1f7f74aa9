package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// countingStore is fakeStore counting every lookup it is asked for.
type countingStore struct {
	*fakeStore
	calls atomic.Int64
}

func (s *countingStore) AppByBearerToken(ctx context.Context, token string) (storage.App, error) {
	s.calls.Add(1)
	return s.fakeStore.AppByBearerToken(ctx, token)
}

func (s *countingStore) AppByConsumerKey(ctx context.Context, key string) (storage.App, error) {
	s.calls.Add(1)
	return s.fakeStore.AppByConsumerKey(ctx, key)
}

func (s *countingStore) AccessToken(ctx context.Context, token string) (storage.AccessToken, error) {
	s.calls.Add(1)
	return s.fakeStore.AccessToken(ctx, token)
}

func (s *countingStore) UserByID(ctx context.Context, id int64) (storage.User, error) {
	s.calls.Add(1)
	return s.fakeStore.UserByID(ctx, id)
}

// TestMalformedCredentialsNeverReachTheStore sends credentials no issued
// one can equal (invalid UTF-8, NUL, other non-printable or non-ASCII
// bytes): each is a 401 naming the field, decided before any lookup, so the
// database never sees a string it would refuse to decode (which was a 500).
func TestMalformedCredentialsNeverReachTheStore(t *testing.T) {
	oauth := func(param, value string) func(*testing.T) *http.Request {
		old := map[string]string{"oauth_token": at1, "oauth_consumer_key": ck1}[param]
		return signed{after: replaceInHeader(param+`="`+old+`"`, param+`="`+value+`"`)}.request
	}
	tests := []struct {
		name, inDetail string
		mw             middleware
		req            func(*testing.T) *http.Request
	}{
		{"bearer, invalid UTF-8", "Malformed bearer token", requireApp, bearerRequest("Bearer \xff\xfe")},
		{"bearer, NUL", "Malformed bearer token", requireBearer, bearerRequest("Bearer AAAA\x00b")},
		{"bearer, control byte", "Malformed bearer token", requireBearer, bearerRequest("Bearer AAAA\x01b")},
		{"bearer, non-ASCII letter", "Malformed bearer token", requireApp, bearerRequest("Bearer AAAAé")},
		{"oauth_token, invalid UTF-8", "oauth_token", requireUser, oauth("oauth_token", "%FF")},
		{"oauth_token, NUL", "oauth_token", requireUser, oauth("oauth_token", "10-at1%00")},
		{"oauth_token, non-ASCII letter", "oauth_token", requireUser, oauth("oauth_token", "%C3%A9")},
		{"oauth_consumer_key, NUL", "oauth_consumer_key", requireUser, oauth("oauth_consumer_key", "%00")},
		{"oauth_consumer_key, invalid UTF-8", "oauth_consumer_key", requireApp, oauth("oauth_consumer_key", "ck1%FE")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := &countingStore{fakeStore: newFakeStore()}
			nonces := &memNonces{}
			a, err := New(store, nonces, "", func() time.Time { return testNow }, quietWriter)
			if err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			tt.mw(a, echo).ServeHTTP(rec, tt.req(t))
			if rec.Code != http.StatusUnauthorized {
				t.Fatalf("status %d, want 401: %s", rec.Code, rec.Body)
			}
			p := assertProblem(t, rec, http.StatusUnauthorized, "")
			if !strings.Contains(fmt.Sprint(p["detail"]), tt.inDetail) {
				t.Errorf("detail %q, want it to mention %q", p["detail"], tt.inDetail)
			}
			if n := store.calls.Load(); n != 0 {
				t.Errorf("the store was asked %d times, want never", n)
			}
			if len(nonces.seen) != 0 {
				t.Errorf("a nonce was recorded")
			}
		})
	}
}
