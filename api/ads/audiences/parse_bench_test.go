package audiences

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

// benchBody is a 2500-operation batch of single-email users of about
// size bytes.
func benchBody(size int) []byte {
	var b bytes.Buffer
	b.WriteString("[")
	u := 0
	for i := range maxOperations {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`{"operation_type":"Update","params":{"users":[`)
		for j := range (size / maxOperations) / 80 {
			if j > 0 {
				b.WriteString(",")
			}
			sum := sha256.Sum256(fmt.Appendf(nil, "u%d", u))
			u++
			b.WriteString(`{"email":["` + hex.EncodeToString(sum[:]) + `"]}`)
		}
		b.WriteString("]}}")
	}
	b.WriteString("]")
	return b.Bytes()
}

// BenchmarkParseBatch is the API's synchronous validation of a ~5 MB
// batch of 2500 operations.
func BenchmarkParseBatch(b *testing.B) {
	body := benchBody(maxBatchBytes)
	b.SetBytes(int64(len(body)))
	now := time.Now()
	for b.Loop() {
		if _, err := parseBatch(body, now); err != nil {
			b.Fatal(err)
		}
	}
}
