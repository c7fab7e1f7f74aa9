package dispatch_test

import (
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/workers/dispatch"
)

// TestHostileDispatcherPoisonAlone: a poison event read alone (the usual
// case on a quiet log: each change is dispatched as it comes) is skipped
// once a later event comes, like one in a batch of several; it must not
// hold the cursor back for good.
func TestHostileDispatcherPoisonAlone(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	alice := factory.User(t, db, nil)
	factory.Post(t, db, &factory.PostOpts{Author: alice})
	base := allSeqs(t, db)
	last := base[len(base)-1]
	var poison atomic.Int64 // the first event after base
	sink := &pickySink{refuse: func(seq int64) bool {
		if seq > last {
			poison.CompareAndSwap(0, seq)
		}
		return seq == poison.Load()
	}}
	reg := prometheus.NewRegistry()
	d := &dispatch.Dispatcher{Log: db, Cursors: db, Listen: db, Sinks: []dispatch.Sink{sink}, Registerer: reg,
		Cursor: "alone", Poll: 20 * time.Millisecond, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond, PoisonAfter: 3}
	start(t, d)
	eventually(t, "the first events taken", func() bool { return slices.Equal(sink.seqs(), base) })
	factory.Post(t, db, &factory.PostOpts{Author: alice}) // the poison, read alone
	eventually(t, "the poison event offered", func() bool { return poison.Load() != 0 })
	time.Sleep(100 * time.Millisecond) // many failures of it alone
	factory.Post(t, db, &factory.PostOpts{Author: alice})
	seqs := allSeqs(t, db)
	want := slices.DeleteFunc(slices.Clone(seqs), func(seq int64) bool { return seq == poison.Load() })
	eventually(t, "every other event taken", func() bool { return slices.Equal(sink.seqs(), want) })
	eventually(t, "cursor past the end", func() bool { return cursorAt(t, db, "alone") == seqs[len(seqs)-1] })
	if n := counterTotal(t, reg, "aviary_events_poison_skipped_total"); n != 1 {
		t.Errorf("skipped counter = %v, want 1", n)
	}
}
