package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func socialEvents(t *testing.T, db *postgres.DB, after int64) []events.Event {
	return eventsOf(t, db, after, func(typ events.Type) bool {
		return strings.HasPrefix(string(typ), "follow.") || strings.HasPrefix(string(typ), "mute.") || strings.HasPrefix(string(typ), "block.")
	})
}

// TestSocialGraph: each change records and appends its event in one
// transaction; a repeat records and appends nothing; a protected target
// gets a pending request without an event; a block ends the follows both
// ways (each with its follow.unfollow) and refuses new ones; the
// counters and lists follow.
func TestSocialGraph(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	now := time.Now()
	alice, bob, carol := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	locked := factory.User(t, db, &factory.UserOpts{ProtectedAt: &now})
	gone := factory.User(t, db, &factory.UserOpts{SuspendedAt: &now})
	follow := func(s, t int64) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) { return db.Follow(ctx, 0, s, t) }
	}
	op := func(f func(context.Context, int64, int64, int64) (bool, error), s, t int64) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) { return f(ctx, 0, s, t) }
	}
	type pair struct{ s, t int64 }
	steps := []struct {
		name   string
		do     func(context.Context) (any, error)
		want   any
		err    error
		events []events.Type
		pairs  []pair
	}{
		{"alice follows bob", follow(alice.ID, bob.ID), storage.FollowState{Following: true}, nil, []events.Type{events.FollowFollow}, []pair{{alice.ID, bob.ID}}},
		{"again: nothing", follow(alice.ID, bob.ID), storage.FollowState{Following: true}, nil, nil, nil},
		{"bob follows alice", follow(bob.ID, alice.ID), storage.FollowState{Following: true}, nil, []events.Type{events.FollowFollow}, []pair{{bob.ID, alice.ID}}},
		{"carol follows bob", follow(carol.ID, bob.ID), storage.FollowState{Following: true}, nil, []events.Type{events.FollowFollow}, []pair{{carol.ID, bob.ID}}},
		{"protected: a pending request", follow(alice.ID, locked.ID), storage.FollowState{Pending: true}, nil, nil, nil},
		{"protected again: still pending", follow(alice.ID, locked.ID), storage.FollowState{Pending: true}, nil, nil, nil},
		{"suspended target", follow(alice.ID, gone.ID), storage.FollowState{}, storage.ErrNotFound, nil, nil},
		{"unknown target", follow(alice.ID, 42), storage.FollowState{}, storage.ErrNotFound, nil, nil},
		{"withdraw the request: no event", op(db.Unfollow, alice.ID, locked.ID), true, nil, nil, nil},
		{"carol unfollows bob", op(db.Unfollow, carol.ID, bob.ID), true, nil, []events.Type{events.FollowUnfollow}, []pair{{carol.ID, bob.ID}}},
		{"unfollow again: nothing", op(db.Unfollow, carol.ID, bob.ID), false, nil, nil, nil},
		{"alice mutes carol", op(db.Mute, alice.ID, carol.ID), true, nil, []events.Type{events.MuteMute}, []pair{{alice.ID, carol.ID}}},
		{"mute again: nothing", op(db.Mute, alice.ID, carol.ID), false, nil, nil, nil},
		{"mute unknown", op(db.Mute, alice.ID, 42), false, storage.ErrNotFound, nil, nil},
		{"alice unmutes carol", op(db.Unmute, alice.ID, carol.ID), true, nil, []events.Type{events.MuteUnmute}, []pair{{alice.ID, carol.ID}}},
		{"unmute again: nothing", op(db.Unmute, alice.ID, carol.ID), false, nil, nil, nil},
		{"alice mutes carol again", op(db.Mute, alice.ID, carol.ID), true, nil, []events.Type{events.MuteMute}, []pair{{alice.ID, carol.ID}}},
		{"bob blocks alice: both follows end", op(db.Block, bob.ID, alice.ID), true, nil,
			[]events.Type{events.FollowUnfollow, events.FollowUnfollow, events.BlockBlock}, []pair{{alice.ID, bob.ID}, {bob.ID, alice.ID}, {bob.ID, alice.ID}}},
		{"block again: nothing", op(db.Block, bob.ID, alice.ID), false, nil, nil, nil},
		{"alice may not follow bob", follow(alice.ID, bob.ID), storage.FollowState{}, storage.ErrBlocked, nil, nil},
		{"nor bob alice", follow(bob.ID, alice.ID), storage.FollowState{}, storage.ErrBlocked, nil, nil},
		{"bob unblocks alice", op(db.Unblock, bob.ID, alice.ID), true, nil, []events.Type{events.BlockUnblock}, []pair{{bob.ID, alice.ID}}},
		{"unblock again: nothing", op(db.Unblock, bob.ID, alice.ID), false, nil, nil, nil},
		{"carol follows alice", follow(carol.ID, alice.ID), storage.FollowState{Following: true}, nil, []events.Type{events.FollowFollow}, []pair{{carol.ID, alice.ID}}},
		{"carol blocks bob (no follows between them)", op(db.Block, carol.ID, bob.ID), true, nil, []events.Type{events.BlockBlock}, []pair{{carol.ID, bob.ID}}},
	}
	for _, s := range steps {
		head, err := db.EventHead(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.do(ctx)
		if !errors.Is(err, s.err) || (s.err == nil && got != s.want) {
			t.Fatalf("%s: %+v, %v; want %+v, %v", s.name, got, err, s.want, s.err)
		}
		evs := socialEvents(t, db, head)
		var types []events.Type
		for _, e := range evs {
			types = append(types, e.Type)
		}
		if !slices.Equal(types, s.events) {
			t.Fatalf("%s: events %v, want %v", s.name, types, s.events)
		}
		for i, e := range evs {
			var p events.Social
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			want := s.pairs[i]
			if p.SourceID != want.s || p.TargetID != want.t || p.Source.ID != want.s || p.Target.ID != want.t || p.At.IsZero() ||
				e.UserID != want.s || e.SubjectID != want.t || p.Source.Username == "" || p.Target.Username == "" {
				t.Errorf("%s: event %d %+v payload %+v, want %d -> %d", s.name, i, e, p, want.s, want.t)
			}
		}
	}
	// The last follow's snapshot counts it: carol follows 1, alice has 1 follower.
	last := socialEvents(t, db, 0)
	var snap events.Social
	for _, e := range last {
		if e.Type == events.FollowFollow {
			_ = json.Unmarshal(e.Payload, &snap)
		}
	}
	if snap.Source.Following != 1 || snap.Target.Followers != 1 {
		t.Errorf("last follow's snapshot %+v", snap)
	}

	metrics, err := db.UserMetrics(ctx, []int64{alice.ID, bob.ID, carol.ID})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64][2]int64{alice.ID: {1, 0}, bob.ID: {0, 0}, carol.ID: {0, 1}} {
		if m := metrics[id]; m.Followers != want[0] || m.Following != want[1] {
			t.Errorf("user %d: followers %d following %d, want %v", id, m.Followers, m.Following, want)
		}
	}
	lists := []struct {
		user int64
		rel  storage.Relation
		want []int64
	}{
		{alice.ID, storage.RelFollowers, []int64{carol.ID}},
		{carol.ID, storage.RelFollowing, []int64{alice.ID}},
		{alice.ID, storage.RelFollowing, nil},
		{alice.ID, storage.RelMuting, []int64{carol.ID}},
		{carol.ID, storage.RelBlocking, []int64{bob.ID}},
		{bob.ID, storage.RelBlocking, nil},
	}
	for _, l := range lists {
		got, err := db.SocialList(ctx, storage.SocialPage{UserID: l.user, Relation: l.rel, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, e := range got {
			ids = append(ids, e.User.ID)
		}
		if !slices.Equal(ids, l.want) {
			t.Errorf("%s of %d = %v, want %v", l.rel, l.user, ids, l.want)
		}
	}
}

// TestSocialListPages: lists are newest first, paged by seq, and leave
// hidden users out.
func TestSocialListPages(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	star := factory.User(t, db, nil)
	var fans []int64
	for range 5 {
		f := factory.User(t, db, nil)
		if _, err := db.Follow(ctx, 0, f.ID, star.ID); err != nil {
			t.Fatal(err)
		}
		fans = append(fans, f.ID)
	}
	if _, err := db.SetUserState(ctx, fans[2], "suspended", time.Now()); err != nil {
		t.Fatal(err)
	}
	var got []int64
	before := int64(0)
	for {
		page, err := db.SocialList(ctx, storage.SocialPage{UserID: star.ID, Relation: storage.RelFollowers, BeforeSeq: before, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			got = append(got, e.User.ID)
		}
		if len(page) < 2 {
			break
		}
		before = page[len(page)-1].Seq
	}
	want := []int64{fans[4], fans[3], fans[1], fans[0]}
	if !slices.Equal(got, want) {
		t.Errorf("pages = %v, want %v", got, want)
	}
	if ok, err := db.Follows(ctx, fans[0], star.ID); err != nil || !ok {
		t.Errorf("Follows = %v, %v", ok, err)
	}
}

// TestSocialConcurrentRepeats: the same follow, mute and block sent many
// times at once record one row and append one event each.
func TestSocialConcurrentRepeats(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, bob, carol := factory.User(t, db, nil), factory.User(t, db, nil), factory.User(t, db, nil)
	head, err := db.EventHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const n = 8
	errs := make(chan error, 3*n)
	for range n {
		go func() { _, err := db.Follow(ctx, 0, alice.ID, bob.ID); errs <- err }()
		go func() { _, err := db.Mute(ctx, 0, alice.ID, carol.ID); errs <- err }()
		go func() { _, err := db.Block(ctx, 0, bob.ID, carol.ID); errs <- err }()
	}
	for range 3 * n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	count := map[events.Type]int{}
	for _, e := range socialEvents(t, db, head) {
		count[e.Type]++
	}
	want := map[events.Type]int{events.FollowFollow: 1, events.MuteMute: 1, events.BlockBlock: 1}
	if len(count) != len(want) || count[events.FollowFollow] != 1 || count[events.MuteMute] != 1 || count[events.BlockBlock] != 1 {
		t.Errorf("events %v, want %v", count, want)
	}
}
