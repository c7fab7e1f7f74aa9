package audiences

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

// BenchmarkCheckContent is the content check of a max-size batch as
// BenchmarkAudienceBatch sends it (2500 operations, 60,000 email digests):
// the part of the worker's apply that benchmark leaves out (the API tier
// cannot import the workers).
func BenchmarkCheckContent(b *testing.B) {
	ops := make([]storage.AudienceOperation, 2500)
	n := 0
	for i := range ops {
		ops[i] = storage.AudienceOperation{Type: storage.AudienceUpdate, Keys: make([]storage.MemberKey, 24)}
		for k := range ops[i].Keys {
			var v [8]byte
			binary.BigEndian.PutUint64(v[:], uint64(n))
			n++
			sum := sha256.Sum256(v[:])
			ops[i].Keys[k][0] = storage.AudienceIdentifiers["email"]
			copy(ops[i].Keys[k][1:], sum[:])
		}
	}
	for b.Loop() {
		if err := CheckContent(ops); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "ids/s")
}
