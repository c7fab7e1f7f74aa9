package web

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// SessionCookie is the session cookie's name.
const SessionCookie = "aviary_session"

// SessionTTL is how long a login lasts.
const SessionTTL = 12 * time.Hour

// MinKeyLength is the shortest session key accepted (bytes).
const MinKeyLength = 32

// Session is what the session cookie carries: a random id (CSRF tokens
// are bound to it; it changes at login) and the logged-in user, if any.
type Session struct {
	ID      string `json:"id"`
	UserID  int64  `json:"uid,omitempty"`
	Expires int64  `json:"exp"` // Unix seconds
}

// LoggedIn reports whether a user is logged in.
func (s Session) LoggedIn() bool { return s.UserID != 0 }

// Sessions signs and reads session cookies: HMAC-SHA256 over the JSON
// payload with a server key, HttpOnly, SameSite=Lax, Secure when the
// public URL is HTTPS. There is no server-side state: a cookie is valid
// until it expires, and rotating the key logs everyone out.
type Sessions struct {
	key    []byte
	secure bool
	now    func() time.Time
}

// NewSessions returns Sessions signing with key (at least MinKeyLength
// bytes); secure marks cookies Secure (HTTPS deployments).
func NewSessions(key []byte, secure bool, now func() time.Time) (*Sessions, error) {
	if len(key) < MinKeyLength {
		return nil, errors.New("web: the session key must be at least 32 bytes")
	}
	if now == nil {
		now = time.Now
	}
	return &Sessions{key: bytes.Clone(key), secure: secure, now: now}, nil
}

// Load returns the request's session, or a fresh anonymous one (not yet
// saved) when the cookie is missing, forged or expired.
func (s *Sessions) Load(r *http.Request) Session {
	if c, err := r.Cookie(SessionCookie); err == nil {
		if sess, ok := s.decode(c.Value); ok {
			return sess
		}
	}
	return s.fresh(0)
}

// fresh returns a new session for user (0: anonymous).
func (s *Sessions) fresh(user int64) Session {
	id := make([]byte, 18)
	_, _ = rand.Read(id) // crypto/rand.Read never fails (Go 1.24+)
	return Session{ID: base64.RawURLEncoding.EncodeToString(id), UserID: user, Expires: s.now().Add(SessionTTL).Unix()}
}

// Login returns a new session for user: a new id, so a session id an
// attacker planted before the login is worth nothing after it.
func (s *Sessions) Login(user int64) Session { return s.fresh(user) }

// Save sets the session cookie.
func (s *Sessions) Save(w http.ResponseWriter, sess Session) {
	payload, _ := json.Marshal(sess)
	value := base64.RawURLEncoding.EncodeToString(payload) + "." + base64.RawURLEncoding.EncodeToString(s.mac("session", payload))
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: value, Path: "/", HttpOnly: true, Secure: s.secure,
		SameSite: http.SameSiteLaxMode, Expires: time.Unix(sess.Expires, 0)})
}

func (s *Sessions) decode(value string) (Session, bool) {
	b64, sig, ok := bytesCut(value)
	if !ok {
		return Session{}, false
	}
	payload, err := base64.RawURLEncoding.DecodeString(b64)
	if err != nil {
		return Session{}, false
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac("session", payload)) {
		return Session{}, false
	}
	var sess Session
	if json.Unmarshal(payload, &sess) != nil || sess.ID == "" || s.now().Unix() >= sess.Expires {
		return Session{}, false
	}
	return sess, true
}

func bytesCut(v string) (string, string, bool) {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] == '.' {
			return v[:i], v[i+1:], true
		}
	}
	return "", "", false
}

func (s *Sessions) mac(purpose string, data []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(purpose))
	m.Write([]byte{0})
	m.Write(data)
	return m.Sum(nil)
}

// CSRFField is the form field carrying the CSRF token.
const CSRFField = "csrf_token"

// CSRFToken is the token every form of sess carries: an HMAC of the
// session id, so it is valid exactly as long as the session and useless
// with another one (a synchronizer token with no server-side state).
func (s *Sessions) CSRFToken(sess Session) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf", []byte(sess.ID)))
}

// CheckCSRF reports whether the POSTed form of r carries sess's token.
func (s *Sessions) CheckCSRF(r *http.Request, sess Session) bool {
	got := r.PostFormValue(CSRFField)
	want := s.CSRFToken(sess)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
