package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestPasswords(t *testing.T) {
	hash, err := HashPassword("a long enough secret")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hash %q is not an argon2id PHC string", hash)
	}
	other, _ := HashPassword("a long enough secret")
	if other == hash {
		t.Error("two hashes of one password are equal: no salt")
	}
	tests := []struct {
		name, hash, password string
		want                 bool
	}{
		{"right", hash, "a long enough secret", true},
		{"wrong", hash, "a long enough secreT", false},
		{"empty hash", "", "", false},
		{"malformed", "$argon2id$v=19$m=x$salt$key", "a long enough secret", false},
		{"bcrypt-looking", "$2a$10$abcdefghijklmnopqrstuv", "x", false},
	}
	for _, tt := range tests {
		if got := CheckPassword(tt.hash, tt.password); got != tt.want {
			t.Errorf("%s: CheckPassword = %v", tt.name, got)
		}
	}
	if _, err := HashPassword("short"); err == nil {
		t.Error("a 5-character password was accepted")
	}
}

func TestSessionsAndCSRF(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	s, err := NewSessions([]byte(strings.Repeat("x", 32)), true, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewSessions([]byte("short"), false, nil); err == nil {
		t.Error("a short key was accepted")
	}
	rec := httptest.NewRecorder()
	sess := s.Login(42)
	s.Save(rec, sess)
	cookie := rec.Result().Cookies()[0]
	if !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteLaxMode {
		t.Errorf("cookie %+v: want HttpOnly, Secure, SameSite=Lax", cookie)
	}
	load := func(value string) Session {
		r := httptest.NewRequest("GET", "/", nil)
		r.AddCookie(&http.Cookie{Name: SessionCookie, Value: value})
		return s.Load(r)
	}
	if got := load(cookie.Value); got != sess {
		t.Errorf("loaded %+v, want %+v", got, sess)
	}
	if got := load(strings.Replace(cookie.Value, "e", "f", 1)); got.UserID != 0 {
		t.Error("a tampered cookie kept its user")
	}
	other, _ := NewSessions([]byte(strings.Repeat("y", 32)), true, func() time.Time { return now })
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(cookie)
	if other.Load(r).UserID != 0 {
		t.Error("a cookie signed with another key was accepted")
	}
	now = now.Add(SessionTTL)
	if got := load(cookie.Value); got.UserID != 0 {
		t.Error("an expired session kept its user")
	}
	if s.Login(42).ID == sess.ID {
		t.Error("login kept the session id")
	}

	post := func(token string) *http.Request {
		r := httptest.NewRequest("POST", "/", strings.NewReader(url.Values{CSRFField: {token}}.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return r
	}
	if !s.CheckCSRF(post(s.CSRFToken(sess)), sess) {
		t.Error("the session's own token was refused")
	}
	if s.CheckCSRF(post(""), sess) || s.CheckCSRF(post(s.CSRFToken(s.Login(42))), sess) {
		t.Error("a missing or another session's token was accepted")
	}
}

func TestSecureHeaders(t *testing.T) {
	rec := httptest.NewRecorder()
	SecureHeaders(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	h := rec.Header()
	if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Frame-Options") != "DENY" ||
		h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", h)
	}
}

// TestPasswordChecksBounded: argon2id runs in at most cap(hashSlots)
// goroutines at once; a check past the bound waits for a slot.
func TestPasswordChecksBounded(t *testing.T) {
	hash, err := HashPassword("a long enough secret")
	if err != nil {
		t.Fatal(err)
	}
	for range cap(hashSlots) {
		hashSlots <- struct{}{}
	}
	done := make(chan bool)
	go func() { done <- CheckPassword(hash, "a long enough secret") }()
	select {
	case <-done:
		t.Fatal("a password was checked while every slot was taken")
	case <-time.After(200 * time.Millisecond):
	}
	<-hashSlots
	if !<-done {
		t.Error("the waiting check failed once a slot was free")
	}
	for range cap(hashSlots) - 1 {
		<-hashSlots
	}
}
