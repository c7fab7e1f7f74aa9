package blob_test

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage/blob"
)

func TestURLSigner(t *testing.T) {
	key, err := blob.NewSigningKey()
	if err != nil || len(key) != blob.SigningKeySize {
		t.Fatalf("NewKey = %d bytes, %v", len(key), err)
	}
	s, err := blob.NewURLSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := blob.NewURLSigner([]byte("another key"))
	now := time.Unix(1_700_000_000, 0)
	q := s.Sign(http.MethodPut, "/2/compliance/jobs/1/upload", now.Add(time.Minute))
	edit := func(name, value string) url.Values {
		c := url.Values{}
		for k, v := range q {
			c[k] = v
		}
		c.Set(name, value)
		return c
	}
	tests := []struct {
		name     string
		signer   *blob.URLSigner
		method   string
		resource string
		q        url.Values
		at       time.Time
		want     error
	}{
		{"valid", s, http.MethodPut, "/2/compliance/jobs/1/upload", q, now, nil},
		{"valid at the expiry second", s, http.MethodPut, "/2/compliance/jobs/1/upload", q, now.Add(time.Minute), nil},
		{"expired", s, http.MethodPut, "/2/compliance/jobs/1/upload", q, now.Add(time.Minute + time.Second), blob.ErrURLExpired},
		{"other resource", s, http.MethodPut, "/2/compliance/jobs/2/upload", q, now, blob.ErrBadSignature},
		{"other method", s, http.MethodGet, "/2/compliance/jobs/1/upload", q, now, blob.ErrWrongMethod},
		{"other key", other, http.MethodPut, "/2/compliance/jobs/1/upload", q, now, blob.ErrBadSignature},
		{"moved expiry", s, http.MethodPut, "/2/compliance/jobs/1/upload", edit(blob.ParamExpires, "9999999999"), now, blob.ErrBadSignature},
		{"no signature", s, http.MethodPut, "/2/compliance/jobs/1/upload", edit(blob.ParamSignature, ""), now, blob.ErrBadSignature},
		{"garbage signature", s, http.MethodPut, "/2/compliance/jobs/1/upload", edit(blob.ParamSignature, "zz"), now, blob.ErrBadSignature},
		{"no parameters", s, http.MethodPut, "/2/compliance/jobs/1/upload", url.Values{}, now, blob.ErrBadSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.signer.Verify(tc.method, tc.resource, tc.q, tc.at); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
	if got := s.Params(); len(got) != 3 {
		t.Errorf("Params = %v", got)
	}
	if _, err := blob.NewURLSigner(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}
