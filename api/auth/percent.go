package auth

import "strings"

const upperHex = "0123456789ABCDEF"

// PercentEncode encodes s as RFC 5849 §3.6 / RFC 3986 §2.1 require: every
// byte outside the unreserved set (ALPHA, DIGIT, '-', '.', '_', '~') becomes
// %XX with uppercase hex digits. Spaces become %20, never '+'.
func PercentEncode(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isUnreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&0x0f])
	}
	return b.String()
}

func isUnreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return c == '-' || c == '.' || c == '_' || c == '~'
}
