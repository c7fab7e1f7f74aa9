package dispatch_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/dispatch"
)

// pickySink takes every event but the ones refuse names (a batch holding
// one fails whole), and refuses everything while down is set; it records
// the seqs it took, each once.
type pickySink struct {
	refuse func(seq int64) bool
	down   atomic.Bool
	mu     sync.Mutex
	took   []int64
}

func (s *pickySink) Name() string { return "picky" }

func (s *pickySink) Handle(_ context.Context, batch []events.Event) error {
	if s.down.Load() {
		return errors.New("backend down")
	}
	for _, e := range batch {
		if s.refuse(e.Seq) {
			return errors.New("cannot take this event")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range batch {
		if !slices.Contains(s.took, e.Seq) {
			s.took = append(s.took, e.Seq)
		}
	}
	return nil
}

func (s *pickySink) seqs() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(slices.Values(s.took))
}

func TestDispatcherPoisonEvents(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// poison picks, from the events' seqs in order, the ones the sink
		// never takes.
		poison func(seqs []int64) []int64
		// outage takes the sink down for a while after the start.
		outage bool
	}{
		{name: "one in the middle", poison: func(s []int64) []int64 { return []int64{s[3]} }},
		{name: "two in a row", poison: func(s []int64) []int64 { return []int64{s[2], s[3]} }},
		{name: "the first", poison: func(s []int64) []int64 { return []int64{s[0]} }},
		{name: "the last, skipped once another event comes", poison: func(s []int64) []int64 { return []int64{s[len(s)-1]} }},
		{name: "an outage skips nothing", poison: func([]int64) []int64 { return nil }, outage: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, _ := storagetest.NewDB(t)
			alice := factory.User(t, db, nil)
			for range 8 {
				factory.Post(t, db, &factory.PostOpts{Author: alice})
			}
			seqs := allSeqs(t, db)
			poison := tc.poison(seqs)
			sink := &pickySink{refuse: func(seq int64) bool { return slices.Contains(poison, seq) }}
			sink.down.Store(tc.outage)
			reg := prometheus.NewRegistry()
			d := &dispatch.Dispatcher{Log: db, Cursors: db, Listen: db, Sinks: []dispatch.Sink{sink}, Registerer: reg,
				Cursor: "poison", Poll: 20 * time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, PoisonAfter: 3}
			start(t, d)
			if tc.outage {
				// Far more failures than PoisonAfter, of every event alone too.
				time.Sleep(300 * time.Millisecond)
				sink.down.Store(false)
			}
			if tc.name == "the last, skipped once another event comes" {
				time.Sleep(100 * time.Millisecond) // stuck on the last: nothing to probe with
				if got := sink.seqs(); len(got) != len(seqs)-1 {
					t.Fatalf("before a later event: took %v, want all %d before the last", got, len(seqs)-1)
				}
				factory.Post(t, db, &factory.PostOpts{Author: alice})
				seqs = allSeqs(t, db)
			}
			want := slices.DeleteFunc(slices.Clone(seqs), func(seq int64) bool { return slices.Contains(poison, seq) })
			eventually(t, "every other event taken", func() bool { return slices.Equal(sink.seqs(), want) })
			eventually(t, "cursor past the end", func() bool { return cursorAt(t, db, "poison") == seqs[len(seqs)-1] })
			skipped := counterTotal(t, reg, "aviary_events_poison_skipped_total")
			if int(skipped) != len(poison) {
				t.Errorf("skipped counter = %v, want %d", skipped, len(poison))
			}
		})
	}
}

// counterTotal sums the series of counter family name in reg.
func counterTotal(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	total := 0.0
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				total += m.GetCounter().GetValue()
			}
		}
	}
	return total
}
