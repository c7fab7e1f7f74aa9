package audiences

import (
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// TestIdentifierAgreesWithIsSHA256Hex: the parser's digest check accepts
// exactly what validation.IsSHA256Hex accepts.
func TestIdentifierAgreesWithIsSHA256Hex(t *testing.T) {
	good := "49e0be2aeccfb51a8dee4c945c8a70a9ac500cf6f5cb08112575f74db9b1470d"
	for _, v := range []string{good, strings.ToUpper(good), good[:63], good + "0", "", "jane@example.com",
		strings.Repeat("g", 64), good[:62] + "0x", good[:63] + " ", strings.Repeat("é", 32), "+15555550100"} {
		var key storage.MemberKey
		got := identifier(storage.IdentEmail, []byte(v), &key) == nil
		if want := validation.IsSHA256Hex(v); got != want {
			t.Errorf("%q: accepted %v, IsSHA256Hex %v", v, got, want)
		}
	}
}
