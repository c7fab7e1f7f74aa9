// Package blobtest is the conformance suite every blob.Store driver passes.
// A driver's test calls Exercise with a constructor for fresh, empty stores:
//
//	func TestContract(t *testing.T) {
//		blobtest.Exercise(t, func(t *testing.T) blob.Store { return newTestStore(t) })
//	}
//
// Presigned URLs are exercised with a plain net/http client (no
// credentials), so the store's URLs must be reachable from the test process.
package blobtest

import (
	"testing"

	"github.com/aviary-dev/aviary/storage/blob"
)

// Exercise runs the blob.Store contract, and the blob.Multiparter contract
// (subtests named Multipart*) if the stores implement it; they are skipped
// otherwise. newStore is called once per subtest (subtests run in parallel)
// and must return an empty store.
func Exercise(t *testing.T, newStore func(t *testing.T) blob.Store) {
	t.Helper()
	tests := []storeTest{
		{"RoundTrip", testRoundTrip},
		{"Overwrite", testOverwrite},
		{"ParentAndChildKeys", testParentAndChildKeys},
		{"StreamUnknownSize", testStreamUnknownSize},
		{"FailedPutKeepsPrevious", testFailedPutKeepsPrevious},
		{"ConcurrentOverwriteIsAtomic", testConcurrentOverwrite},
		{"NotFound", testNotFound},
		{"Delete", testDelete},
		{"InvalidKey", testInvalidKey},
		{"InvalidTTL", testInvalidTTL},
		{"PresignRoundTrip", testPresignRoundTrip},
		{"PresignExpired", testPresignExpired},
		{"PresignTampered", testPresignTampered},
		{"PresignWrongMethod", testPresignWrongMethod},
		{"Ping", testPing},
	}
	for _, mt := range multipartTests {
		tests = append(tests, storeTest{mt.name, withMultiparter(mt.run)})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, newStore(t))
		})
	}
}

// storeTest is one subtest of Exercise.
type storeTest struct {
	name string
	run  func(t *testing.T, s blob.Store)
}

func testPing(t *testing.T, s blob.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}
