package auth

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// errStoreDown is what fakeStore returns for the "boom" keys.
var errStoreDown = errors.New("fake store: connection refused")

// fakeStore is an in-memory Store. Lookups of "boom" fail with errStoreDown.
type fakeStore struct {
	apps   []storage.App
	bearer map[string]int64
	tokens map[string]storage.AccessToken
	users  map[int64]storage.User
	oauth2 map[string]storage.OAuth2Token
}

func (s *fakeStore) AppByID(_ context.Context, id int64) (storage.App, error) {
	return s.appByID(id)
}

func (s *fakeStore) OAuth2Token(_ context.Context, token string) (storage.OAuth2Token, error) {
	t, ok := s.oauth2[token]
	if !ok {
		return storage.OAuth2Token{}, fmt.Errorf("oauth2 token: %w", storage.ErrNotFound)
	}
	return t, nil
}

func (s *fakeStore) AppByBearerToken(_ context.Context, token string) (storage.App, error) {
	if token == "boom" {
		return storage.App{}, errStoreDown
	}
	id, ok := s.bearer[token]
	if !ok {
		return storage.App{}, fmt.Errorf("bearer token: %w", storage.ErrNotFound)
	}
	return s.appByID(id)
}

func (s *fakeStore) AppByConsumerKey(_ context.Context, key string) (storage.App, error) {
	if key == "boom" {
		return storage.App{}, errStoreDown
	}
	for _, app := range s.apps {
		if app.ConsumerKey == key {
			return app, nil
		}
	}
	return storage.App{}, fmt.Errorf("consumer key: %w", storage.ErrNotFound)
}

func (s *fakeStore) AccessToken(_ context.Context, token string) (storage.AccessToken, error) {
	t, ok := s.tokens[token]
	if !ok {
		return storage.AccessToken{}, fmt.Errorf("access token: %w", storage.ErrNotFound)
	}
	return t, nil
}

func (s *fakeStore) UserByID(_ context.Context, id int64) (storage.User, error) {
	u, ok := s.users[id]
	if !ok {
		return storage.User{}, fmt.Errorf("user %d: %w", id, storage.ErrNotFound)
	}
	return u, nil
}

func (s *fakeStore) appByID(id int64) (storage.App, error) {
	for _, app := range s.apps {
		if app.ID == id {
			return app, nil
		}
	}
	return storage.App{}, fmt.Errorf("app %d: %w", id, storage.ErrNotFound)
}

// memNonces is an in-memory NonceStore that ignores expiry.
type memNonces struct {
	mu   sync.Mutex
	seen map[string]bool
}

func (m *memNonces) Use(_ context.Context, key string, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.seen == nil {
		m.seen = make(map[string]bool)
	}
	if m.seen[key] {
		return false, nil
	}
	m.seen[key] = true
	return true, nil
}

// Test fixture credentials: app 1 owns token at1 of user 10, app 2 owns at2
// of user 20; at-ghost belongs to app 1 but its user is gone. atRead is a
// read-only token of app 1. The state tokens of app 1 belong to users in
// that account state; their secret is the token itself.
const (
	ck1, cs1        = "ck1", "cs1 secret/+"
	ck2, cs2        = "ck2", "cs2"
	at1, ts1        = "10-at1", "ts1 secret"
	at2, ts2        = "20-at2", "ts2"
	atGhost         = "99-ghost"
	atRead          = "11-read"
	atDeleted       = "30-deleted"
	atDeactivated   = "40-deactivated"
	atSuspended     = "50-suspended"
	atProtected     = "60-protected"
	atGoneAndBanned = "70-deleted-suspended"
	bt1             = "AAAA%2Fbearer1"
	// OAuth 2.0 user tokens of app 2 (user 10 unless named).
	ot1, otExpired, otRevoked, otRefresh, otSuspended = "o2-live", "o2-expired", "o2-revoked", "o2-refresh", "o2-suspended"
)

func newFakeStore() *fakeStore {
	at := time.Unix(1_600_000_000, 0)
	rw, ro := storage.AccessReadWrite, storage.AccessRead
	s := &fakeStore{
		apps: []storage.App{
			{ID: 1, Name: "one", ConsumerKey: ck1, ConsumerSecret: cs1},
			{ID: 2, Name: "two", ConsumerKey: ck2, ConsumerSecret: cs2},
		},
		bearer: map[string]int64{bt1: 1},
		tokens: map[string]storage.AccessToken{
			at1:     {Token: at1, Secret: ts1, AppID: 1, UserID: 10, AccessLevel: rw},
			at2:     {Token: at2, Secret: ts2, AppID: 2, UserID: 20, AccessLevel: rw},
			atGhost: {Token: atGhost, Secret: "ghost", AppID: 1, UserID: 99, AccessLevel: rw},
			atRead:  {Token: atRead, Secret: atRead, AppID: 1, UserID: 11, AccessLevel: ro},
		},
		users: map[int64]storage.User{
			10: {ID: 10, Username: "ten"},
			11: {ID: 11, Username: "eleven"},
			20: {ID: 20, Username: "twenty"},
			30: {ID: 30, Username: "deleted", DeletedAt: &at},
			40: {ID: 40, Username: "deactivated", DeactivatedAt: &at},
			50: {ID: 50, Username: "suspended", SuspendedAt: &at},
			60: {ID: 60, Username: "protected", ProtectedAt: &at},
			70: {ID: 70, Username: "deleted-suspended", DeletedAt: &at, SuspendedAt: &at},
		},
	}
	live, gone := testNow.Add(time.Hour), testNow.Add(-time.Second)
	read := []string{"tweet.read", "users.read"}
	s.oauth2 = map[string]storage.OAuth2Token{
		ot1:         {Kind: storage.TokenAccess, AppID: 2, UserID: 10, Scopes: read, ExpiresAt: live},
		otExpired:   {Kind: storage.TokenAccess, AppID: 2, UserID: 10, Scopes: read, ExpiresAt: gone},
		otRevoked:   {Kind: storage.TokenAccess, AppID: 2, UserID: 10, Scopes: read, ExpiresAt: live, Revoked: true},
		otRefresh:   {Kind: storage.TokenRefresh, AppID: 2, UserID: 10, Scopes: read, ExpiresAt: live},
		otSuspended: {Kind: storage.TokenAccess, AppID: 2, UserID: 50, Scopes: read, ExpiresAt: live},
	}
	for id, tok := range map[int64]string{30: atDeleted, 40: atDeactivated, 50: atSuspended, 60: atProtected, 70: atGoneAndBanned} {
		s.tokens[tok] = storage.AccessToken{Token: tok, Secret: tok, AppID: 1, UserID: id, AccessLevel: rw}
	}
	return s
}
