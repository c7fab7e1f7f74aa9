package validation

// IsSHA256Hex reports whether s is a SHA-256 digest in hex: exactly 64 hex
// digits (either case). Hashed audience identifiers must be.
func IsSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
