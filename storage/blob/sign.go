package blob

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Query parameters of a signed URL.
const (
	ParamMethod    = "X-Aviary-Method"
	ParamExpires   = "X-Aviary-Expires"
	ParamSignature = "X-Aviary-Signature"
)

// SigningKeySize is the length of keys NewSigningKey makes.
const SigningKeySize = 32

// Reasons a signed request is refused; each is a phrase a client may read.
var (
	ErrBadSignature = errors.New("the URL's signature is missing or invalid")
	ErrWrongMethod  = errors.New("the URL was not signed for this method")
	ErrURLExpired   = errors.New("the URL has expired")
)

// URLSigner signs and verifies Aviary's own presigned URLs: the local
// driver's /blobs/ URLs and the compliance upload URLs the API serves itself
// (docs/compliance-upload-gateway.md). A URL carries three query
// parameters: the method it was signed for, its expiry (Unix seconds) and
// an HMAC-SHA256 over
//
//	method "\n" resource "\n" expires
//
// where resource is what the URL names (a blob key, an API path). Whoever
// holds the key can mint URLs, so every process that verifies them must
// share it: the local driver keeps it in its directory, the API in
// PostgreSQL.
//
// It is safe for concurrent use.
type URLSigner struct {
	key []byte
}

// NewURLSigner returns a URLSigner for key, which must not be empty.
func NewURLSigner(key []byte) (*URLSigner, error) {
	if len(key) == 0 {
		return nil, errors.New("blob: empty URL signing key")
	}
	return &URLSigner{key: append([]byte(nil), key...)}, nil
}

// NewSigningKey returns SigningKeySize random bytes.
func NewSigningKey() ([]byte, error) {
	key := make([]byte, SigningKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("blob: generate URL signing key: %w", err)
	}
	return key, nil
}

// Params lists the query parameters Sign adds, for endpoints that reject
// unknown ones.
func (s *URLSigner) Params() []string {
	return []string{ParamMethod, ParamExpires, ParamSignature}
}

// Sign returns the query parameters that let a request with method reach
// resource until expires (whole seconds, rounded down).
func (s *URLSigner) Sign(method, resource string, expires time.Time) url.Values {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return url.Values{
		ParamMethod:    {method},
		ParamExpires:   {exp},
		ParamSignature: {hex.EncodeToString(s.mac(method, resource, exp))},
	}
}

// Verify checks the signed parameters q of a request with method for
// resource at now. It returns ErrWrongMethod, ErrBadSignature or ErrURLExpired.
// The expiry is checked after the signature, so a forged expiry is reported
// as a bad signature.
func (s *URLSigner) Verify(method, resource string, q url.Values, now time.Time) error {
	if q.Get(ParamSignature) == "" {
		return ErrBadSignature
	}
	if q.Get(ParamMethod) != method {
		return ErrWrongMethod
	}
	expires := q.Get(ParamExpires)
	exp, err := strconv.ParseInt(expires, 10, 64)
	if err != nil {
		return ErrBadSignature
	}
	sig, err := hex.DecodeString(q.Get(ParamSignature))
	if err != nil || !hmac.Equal(sig, s.mac(method, resource, expires)) {
		return ErrBadSignature
	}
	if now.Unix() > exp {
		return ErrURLExpired
	}
	return nil
}

// mac is HMAC-SHA256 over method "\n" resource "\n" expires.
func (s *URLSigner) mac(method, resource, expires string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(method + "\n" + resource + "\n" + expires))
	return m.Sum(nil)
}
