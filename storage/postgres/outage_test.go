package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// callTimeout is the bound the tests give every call, as
// AVIARY_DEPENDENCY_TIMEOUT does for the API tier.
const callTimeout = 500 * time.Millisecond

// outageLimit is a generous multiple of callTimeout: it only proves a call
// did not wait for pgx's default, which is forever. The repo has no timed
// assertions for speed.
const outageLimit = 3 * time.Second

// proxied opens db's database through a proxy the test controls.
func proxied(t *testing.T, dbURL string, opts postgres.Options) (*postgres.DB, *storagetest.Proxy) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	px := storagetest.NewProxy(t, u.Host)
	u.Host = px.Addr()
	db, err := postgres.OpenWith(t.Context(), u.String(), opts)
	if err != nil {
		t.Fatalf("open through proxy: %v", err)
	}
	t.Cleanup(db.Close)
	t.Cleanup(func() { px.SetDown(true) }) // first: a call stuck on a regression must not block Close
	return db, px
}

// timed runs call with ctx and fails the test if it takes 10 s.
func timed(t *testing.T, ctx context.Context, call func(context.Context) error) (time.Duration, error) {
	t.Helper()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- call(ctx) }()
	select {
	case err := <-done:
		return time.Since(start), err
	case <-time.After(10 * time.Second):
		t.Fatalf("call still waiting after 10s")
		return 0, nil
	}
}

// TestCallTimeoutOutage freezes and then cuts the connection of a DB opened
// with a CallTimeout: reads, transactional writes and pings fail with
// storage.ErrUnavailable within the bound even though the caller's context
// has no deadline, and the DB recovers after a thaw.
func TestCallTimeoutOutage(t *testing.T) {
	t.Parallel()
	direct, dbURL := storagetest.NewDB(t)
	app, err := direct.CreateApp(t.Context(), "outage", "")
	if err != nil {
		t.Fatal(err)
	}
	db, px := proxied(t, dbURL, postgres.Options{CallTimeout: callTimeout, ConnectTimeout: callTimeout})
	calls := map[string]func(context.Context) error{
		"read": func(ctx context.Context) error { _, err := db.AppByConsumerKey(ctx, app.ConsumerKey); return err },
		"write": func(ctx context.Context) error {
			_, err := db.CreateComplianceJob(ctx, storage.ComplianceJob{ID: time.Now().UnixNano(), AppID: app.ID, Type: "tweets", CreatedAt: time.Now()})
			return err
		},
		"ping": db.Ping,
	}
	for _, mode := range []struct {
		name       string
		take, give func()
	}{
		{"frozen", px.Freeze, px.Thaw},
		{"down", func() { px.SetDown(true) }, func() { px.SetDown(false) }},
	} {
		mode.take()
		for name, call := range calls {
			elapsed, err := timed(t, context.Background(), call)
			if !errors.Is(err, storage.ErrUnavailable) {
				t.Errorf("%s, %s: err %v; want storage.ErrUnavailable", mode.name, name, err)
			}
			if elapsed >= outageLimit {
				t.Errorf("%s, %s: gave up after %v; want under %v", mode.name, name, elapsed.Round(time.Millisecond), outageLimit)
			}
		}
		mode.give()
		if err := calls["read"](t.Context()); err != nil {
			t.Errorf("after %s: read %v", mode.name, err)
		}
	}
}

// TestCallerDeadlineAndCancel: without a CallTimeout a call still honours
// the caller's deadline (ErrUnavailable when it expires), and a caller that
// gives up is not reported as an outage.
func TestCallerDeadlineAndCancel(t *testing.T) {
	t.Parallel()
	direct, dbURL := storagetest.NewDB(t)
	app, err := direct.CreateApp(t.Context(), "deadline", "")
	if err != nil {
		t.Fatal(err)
	}
	db, px := proxied(t, dbURL, postgres.Options{})
	read := func(ctx context.Context) error { _, err := db.AppByConsumerKey(ctx, app.ConsumerKey); return err }
	px.Freeze()
	defer px.Thaw()

	deadline, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	if elapsed, err := timed(t, deadline, read); !errors.Is(err, storage.ErrUnavailable) || elapsed >= outageLimit {
		t.Errorf("caller deadline: err %v after %v; want storage.ErrUnavailable within %v", err, elapsed, outageLimit)
	}
	gone, cancelGone := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancelGone)
	if _, err := timed(t, gone, read); err == nil || errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("caller canceled: err %v; want an error that is not storage.ErrUnavailable", err)
	}
}

// TestRefusedInputIsNotAnOutage: a statement the server refuses (here a
// string it cannot decode) is an ordinary error, neither ErrUnavailable nor
// ErrNotFound.
func TestRefusedInputIsNotAnOutage(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	_, err := db.AppByConsumerKey(t.Context(), "\x00")
	if err == nil || errors.Is(err, storage.ErrUnavailable) || errors.Is(err, storage.ErrNotFound) {
		t.Errorf("err %v; want a plain error", err)
	}
}

// boundedPool opens a fresh database with a CallTimeout (the plain one,
// PlainCallBound, when plain) and a pool of one connection, so a test knows
// which connection a call gets.
func boundedPool(t *testing.T, plain bool) (*postgres.DB, storage.App) {
	t.Helper()
	direct, dbURL := storagetest.NewDB(t)
	app, err := direct.CreateApp(t.Context(), "bounded", "")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	db, err := postgres.OpenWith(t.Context(), u.String(), postgres.Options{CallTimeout: callTimeout, ConnectTimeout: callTimeout, PlainCallBound: plain})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	return db, app
}

// TestCallTimeoutBoundsStatements: a statement longer than the bound fails
// with storage.ErrUnavailable, one within a call's longer bound (withBound)
// completes, and the bound of a statement does not outlive it: a batch
// (which the bound does not cover) on the same connection, idle for longer
// than the bound since its last statement, goes through. The same holds
// for the plain bound the benchmarks compare it with (PlainCallBound).
func TestCallTimeoutBoundsStatements(t *testing.T) {
	t.Parallel()
	forEachBound(t, testCallTimeoutBoundsStatements)
}

// forEachBound runs test on the API's call bound and on the plain one.
func forEachBound(t *testing.T, test func(t *testing.T, plain bool)) {
	for _, plain := range []bool{false, true} {
		t.Run(fmt.Sprintf("plain=%v", plain), func(t *testing.T) {
			t.Parallel()
			test(t, plain)
		})
	}
}

func testCallTimeoutBoundsStatements(t *testing.T, plain bool) {
	db, app := boundedPool(t, plain)
	read := func(ctx context.Context) error { _, err := db.AppByConsumerKey(ctx, app.ConsumerKey); return err }
	if elapsed, err := timed(t, t.Context(), func(ctx context.Context) error { return db.Sleep(ctx, 4*callTimeout, 0) }); !errors.Is(err, storage.ErrUnavailable) || elapsed >= outageLimit {
		t.Errorf("statement over the bound: err %v after %v; want storage.ErrUnavailable within %v", err, elapsed, outageLimit)
	}
	// The pool replaces the timed-out connection once pgx has cleaned it up
	// (cancel request, terminate): reads go through again within the limit.
	if err := retryFor(outageLimit, func() error { return read(t.Context()) }); err != nil {
		t.Fatalf("read after a timed-out statement: %v", err)
	}
	if err := db.Sleep(t.Context(), 2*callTimeout, 4*callTimeout); err != nil {
		t.Errorf("statement within its call's longer bound: %v", err)
	}
	if err := db.BatchAfterIdle(t.Context(), 2*callTimeout); err != nil {
		t.Errorf("batch on a connection idle past its last statement's bound: %v", err)
	}
}

// retryFor calls f until it succeeds or limit has passed, and returns its
// last error.
func retryFor(limit time.Duration, f func() error) error {
	deadline := time.Now().Add(limit)
	for {
		err := f()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCallTimeoutBoundsPoolWaits: while every pooled connection is taken, a
// call waits for one at most about the bound, with or without a deadline
// of its own, and fails with storage.ErrUnavailable; once a connection
// frees up, calls go through (with the plain bound too).
func TestCallTimeoutBoundsPoolWaits(t *testing.T) {
	t.Parallel()
	forEachBound(t, testCallTimeoutBoundsPoolWaits)
}

func testCallTimeoutBoundsPoolWaits(t *testing.T, plain bool) {
	db, app := boundedPool(t, plain)
	read := func(ctx context.Context) error { _, err := db.AppByConsumerKey(ctx, app.ConsumerKey); return err }
	held, err := db.HoldConn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	release := sync.OnceFunc(held)
	t.Cleanup(release) // before db.Close, which waits for it
	withDeadline, cancel := context.WithTimeout(t.Context(), time.Hour)
	defer cancel()
	for name, ctx := range map[string]context.Context{"no deadline": t.Context(), "caller deadline": withDeadline} {
		if elapsed, err := timed(t, ctx, read); !errors.Is(err, storage.ErrUnavailable) || elapsed >= outageLimit {
			t.Errorf("%s: err %v after %v; want storage.ErrUnavailable within %v", name, err, elapsed, outageLimit)
		}
	}
	release()
	if err := read(t.Context()); err != nil {
		t.Errorf("read once the connection is free: %v", err)
	}
}
