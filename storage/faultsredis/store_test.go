package faultsredis

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/domain/faults"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

func newStore(t *testing.T) *Store {
	t.Helper()
	addr, n := storagetest.RedisDB(t)
	rc := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rc.Close() })
	return New(rc, "t:faults:")
}

func mustCreate(t *testing.T, s *Store, f faults.Fault) faults.Fault {
	t.Helper()
	if err := f.Normalize(); err != nil {
		t.Fatal(err)
	}
	out, err := s.Create(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestHitCountsAndUsesUp(t *testing.T) { checkHitCountsAndUsesUp(t, newStore(t)) }

func checkHitCountsAndUsesUp(t *testing.T, s *Store) {
	ctx := context.Background()
	counted := mustCreate(t, s, faults.Fault{AppID: 1, Effect: faults.Effect{Kind: faults.Status, Status: 503}, Count: 2})
	open := mustCreate(t, s, faults.Fault{Effect: faults.Effect{Kind: faults.Status, Status: 500}})
	tests := []struct {
		name string
		f    faults.Fault
		want bool
	}{
		{"first of two", counted, true},
		{"second of two", counted, true},
		{"used up", counted, false},
		{"no count", open, true},
		{"no count again", open, true},
		{"deleted", faults.Fault{ID: "gone"}, false},
	}
	for _, tt := range tests {
		got, err := s.Hit(ctx, tt.f)
		if err != nil || got != tt.want {
			t.Errorf("%s: Hit = %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	all, err := s.List(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("List = %v, %v", all, err)
	}
	byID := map[string]faults.Fault{all[0].ID: all[0], all[1].ID: all[1]}
	if c := byID[counted.ID]; c.Hits != 2 || c.Remaining != 0 || c.AppID != 1 {
		t.Errorf("counted fault %+v", c)
	}
	if o := byID[open.ID]; o.Hits != 2 {
		t.Errorf("open fault %+v", o)
	}
}

func TestTakeAndClear(t *testing.T) { checkTakeAndClear(t, newStore(t)) }

func checkTakeAndClear(t *testing.T, s *Store) {
	ctx := context.Background()
	mustCreate(t, s, faults.Fault{AppID: 1, Effect: faults.Effect{Kind: faults.CRCTimeout}, Count: 1})
	mustCreate(t, s, faults.Fault{AppID: 2, Effect: faults.Effect{Kind: faults.MediaFailure}, Count: 1})
	steps := []struct {
		name string
		run  func() (any, error)
		want any
	}{
		{"another app's CRC", func() (any, error) { k, err := s.CRCFault(ctx, 2); return k, err }, faults.Kind("")},
		{"the app's CRC", func() (any, error) { k, err := s.CRCFault(ctx, 1); return k, err }, faults.CRCTimeout},
		{"the CRC fault is used up", func() (any, error) { k, err := s.CRCFault(ctx, 1); return k, err }, faults.Kind("")},
		{"another app's media", func() (any, error) { return s.MediaFault(ctx, 1) }, false},
		{"the app's media", func() (any, error) { return s.MediaFault(ctx, 2) }, true},
		{"the media fault is used up", func() (any, error) { return s.MediaFault(ctx, 2) }, false},
	}
	for _, st := range steps {
		got, err := st.run()
		if err != nil || got != st.want {
			t.Errorf("%s: %v, %v; want %v", st.name, got, err, st.want)
		}
	}
	mustCreate(t, s, faults.Fault{AppID: 3, Effect: faults.Effect{Kind: faults.Status, Status: 503}})
	if n, err := s.Clear(ctx, 3); err != nil || n != 1 {
		t.Errorf("Clear(3) = %d, %v", n, err)
	}
	if n, err := s.Clear(ctx, 0); err != nil || n != 2 {
		t.Errorf("Clear(0) = %d, %v", n, err)
	}
	if all, err := s.List(ctx); err != nil || len(all) != 0 {
		t.Errorf("after Clear: %v, %v", all, err)
	}
}

// TestListKeepsCreationOrder: faults made within one millisecond list in
// the order they were made (the oldest applies to a request first).
func TestListKeepsCreationOrder(t *testing.T) {
	s := newStore(t)
	base := time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC)
	var step time.Duration
	s.now = func() time.Time { step += 50 * time.Microsecond; return base.Add(step) }
	var made []string
	for i := 0; i < 8; i++ {
		made = append(made, mustCreate(t, s, faults.Fault{Effect: faults.Effect{Kind: faults.Status, Status: 500 + i}}).ID)
	}
	all, err := s.List(context.Background())
	if err != nil || len(all) != len(made) {
		t.Fatalf("List = %v, %v", all, err)
	}
	for i, f := range all {
		if f.ID != made[i] || f.Effect.Status != 500+i {
			t.Errorf("position %d: fault %s (%d), want %s", i, f.ID, f.Effect.Status, made[i])
		}
	}
}

// TestStoreOnRedisCluster runs the store on a three-node Redis Cluster:
// the hit script and the transactions use the three hashes together, which
// a cluster allows only in one slot (the {faults} hash tag).
func TestStoreOnRedisCluster(t *testing.T) {
	rc := storagetest.RedisCluster(t).Client(t)
	for name, check := range map[string]func(*testing.T, *Store){
		"hits": checkHitCountsAndUsesUp, "take and clear": checkTakeAndClear,
	} {
		t.Run(name, func(t *testing.T) {
			s := New(rc, "t:"+name+":")
			slots := map[int64]bool{}
			for _, k := range []string{s.defs, s.hits, s.left} {
				slot, err := rc.ClusterKeySlot(context.Background(), k).Result()
				if err != nil {
					t.Fatal(err)
				}
				slots[slot] = true
			}
			if len(slots) != 1 {
				t.Fatalf("the store's keys hash to slots %v; want one", slots)
			}
			check(t, s)
		})
	}
}
