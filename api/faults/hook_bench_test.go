package faults

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/faults"
)

// memStore is a Store in memory, for the hook's benchmark.
type memStore struct{ faults []faults.Fault }

func (s *memStore) Create(_ context.Context, f faults.Fault) (faults.Fault, error) {
	s.faults = append(s.faults, f)
	return f, nil
}
func (s *memStore) List(context.Context) ([]faults.Fault, error)    { return s.faults, nil }
func (s *memStore) Delete(context.Context, string) (bool, error)    { return false, nil }
func (s *memStore) Clear(context.Context, int64) (int, error)       { return 0, nil }
func (s *memStore) Hit(context.Context, faults.Fault) (bool, error) { return true, nil }

// BenchmarkHook compares an endpoint's handler bare and behind the hook:
// with no fault set, and with a fault set for another route (the cost of
// matching). ns/op of "no fault" should stay within a few ns of "bare".
func BenchmarkHook(b *testing.B) {
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	e := httpx.Endpoint{Pattern: "GET /2/users/{id}"}
	req := httptest.NewRequest("GET", "/2/users/1", nil)
	w := httptest.NewRecorder()
	other := []faults.Fault{{ID: "x", Match: faults.Match{Route: "/2/tweets"}, Probability: 1,
		Effect: faults.Effect{Kind: faults.Status, Status: 503}}}
	for _, bc := range []struct {
		name   string
		faults []faults.Fault
		hook   bool
	}{{"bare", nil, false}, {"no fault", nil, true}, {"fault elsewhere", other, true}} {
		b.Run(bc.name, func(b *testing.B) {
			var h http.Handler = next
			if bc.hook {
				m := New(Deps{Store: &memStore{faults: bc.faults}})
				m.Reload(context.Background())
				h = m.Wrap(e, nil, next)
			}
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(w, req)
			}
		})
	}
}
