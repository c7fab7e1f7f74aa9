package streams

import "testing"

// FuzzPageToken checks the stream rules' page tokens both ways: every id
// above 0 makes a 16-character token read back to the id, and every token
// accepted is the one its id makes (no other spelling: base32's line
// breaks and unused low bits are refused). Crashers it finds are kept in
// testdata/fuzz/FuzzPageToken.
func FuzzPageToken(f *testing.F) {
	for _, id := range []int64{1, 42, 1 << 40, 1<<63 - 1} {
		f.Add(encodePageToken(id), id)
	}
	for _, s := range []string{"", "0000000000000000", "zzzzzzzzzzzzzzzz"} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, tok string, id int64) {
		if id > 0 {
			s := encodePageToken(id)
			if got, ok := decodePageToken(s); len(s) != 16 || !ok || got != id {
				t.Fatalf("decodePageToken(encodePageToken(%d) = %q) = %d, %v", id, s, got, ok)
			}
		}
		got, ok := decodePageToken(tok)
		if ok && (got <= 0 || encodePageToken(got) != tok) {
			t.Fatalf("decodePageToken(%q) = %d, whose token is %q", tok, got, encodePageToken(got))
		}
	})
}
