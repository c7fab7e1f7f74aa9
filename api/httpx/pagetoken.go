package httpx

import (
	"encoding/base32"
	"encoding/binary"
)

// PageToken is the pagination token of a page whose last row has key
// last (an id or a sequence number, above 0): the key's eight bytes in
// base32hex, 16 characters with their padding (the OpenAPI's minimum
// length for next_token). ParsePageToken reads it back.
func PageToken(last int64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(last))
	return base32.HexEncoding.EncodeToString(b[:])
}

// ParsePageToken is the key a PageToken holds; false for anything that
// is not such a token. A token has one spelling, the one PageToken
// gives: base32's decoder also takes line breaks and ignores the unused
// low bit of the last character, so the decoded key is printed again and
// compared (docs/fuzzing.md).
func ParsePageToken(tok string) (int64, bool) {
	b, err := base32.HexEncoding.DecodeString(tok)
	if err != nil || len(b) != 8 {
		return 0, false
	}
	key := int64(binary.BigEndian.Uint64(b))
	if key <= 0 || PageToken(key) != tok {
		return 0, false
	}
	return key, true
}
