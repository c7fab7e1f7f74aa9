package s3

import (
	"testing"

	"errors"
	"github.com/aviary-dev/aviary/storage/blob"
	"io"
	"strings"
)

// TestPartSize checks objects up to S3's 5 TiB limit fit in maxParts parts
// of at least the minimum size.
func TestPartSize(t *testing.T) {
	for _, size := range []int64{-1, 0, 1, blob.MinPartSize, maxParts * blob.MinPartSize, maxParts*blob.MinPartSize + 1, 1 << 40, 5 << 40} {
		ps := partSize(size)
		if ps < blob.MinPartSize || ps > blob.MaxPartSize {
			t.Errorf("partSize(%d) = %d, want within [%d, %d]", size, ps, blob.MinPartSize, int64(blob.MaxPartSize))
		}
		if parts := (size + ps - 1) / ps; parts > maxParts {
			t.Errorf("partSize(%d) = %d needs %d parts, over %d", size, ps, parts, maxParts)
		}
	}
	if got := partSize(-1); got != blob.MinPartSize {
		t.Errorf("partSize(-1) = %d, want %d", got, blob.MinPartSize)
	}
}

// brokenReader yields data, then fails the way net/http's chunked body
// reader does when the client's connection drops mid-chunk.
type brokenReader struct{ data []byte }

func (b *brokenReader) Read(p []byte) (int, error) {
	if len(b.data) == 0 {
		return 0, io.ErrUnexpectedEOF
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	return n, nil
}

// TestPartReaderBrokenBody: a body that broke off is an error, never a short
// last part (before, it was committed as a complete, truncated object).
func TestPartReaderBrokenBody(t *testing.T) {
	tests := []struct {
		name     string
		r        io.Reader
		wantN    int
		wantLast bool
		wantErr  error
	}{
		{"clean end", strings.NewReader("abc"), 3, true, nil},
		{"broken off", &brokenReader{data: []byte("abc")}, 3, false, io.ErrUnexpectedEOF},
		{"full part, more to come", strings.NewReader("abcdefgh"), 4, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pr := &partReader{r: tc.r}
			n, last, err := pr.next(make([]byte, 4))
			if n != tc.wantN || last != tc.wantLast || !errors.Is(err, tc.wantErr) {
				t.Errorf("next = %d, %v, %v; want %d, %v, %v", n, last, err, tc.wantN, tc.wantLast, tc.wantErr)
			}
		})
	}
}
