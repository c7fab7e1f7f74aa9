// Package ids renders and generates identifiers: core ids are 64-bit
// time-ordered integers rendered as decimal strings; advertising ids are
// short opaque base-36 strings; credentials are random alphanumeric strings.
package ids

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"strconv"
	"time"
)

// Epoch is the platform's id epoch (2010-11-04T01:42:54.657Z) in Unix ms.
const Epoch = 1288834974657

const alphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// Format renders a core id as the API shows it.
func Format(id int64) string { return strconv.FormatInt(id, 10) }

// Time returns the creation time encoded in a core id.
func Time(id int64) time.Time { return time.UnixMilli((id >> 22) + Epoch).UTC() }

// Base36 renders a numeric id as a short opaque advertising id.
func Base36(id int64) string { return strconv.FormatInt(id, 36) }

// Token returns n random characters from [A-Za-z0-9].
func Token(n int) (string, error) {
	out := make([]byte, n)
	max := big.NewInt(int64(len(alphanumeric)))
	for i := range out {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			return "", fmt.Errorf("random token: %w", err)
		}
		out[i] = alphanumeric[v.Int64()]
	}
	return string(out), nil
}

// IsUUID reports whether s has the form of a UUID: 8-4-4-4-12 hex digits,
// either case (the streaming connection ids).
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return false
		}
	}
	return true
}
