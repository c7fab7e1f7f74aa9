// Package postgres implements Aviary's record stores on PostgreSQL with
// pgx/v5. The schema is managed by the numbered migrations embedded from
// migrations/; Migrate applies the missing ones under an advisory lock so
// several processes can run it at once.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/storage"
)

// DB is the PostgreSQL-backed store for every record type.
type DB struct {
	pool  *pgxpool.Pool
	bound time.Duration
}

// Options tune how a DB reaches the server. The zero value waits as long
// as the caller's context allows, which suits migrations and the workers'
// long batches.
type Options struct {
	// CallTimeout bounds every statement (and every wait for a pooled
	// connection) on top of the caller's context, so a hung server or
	// network costs a request at most this long per call; the call then
	// fails with storage.ErrUnavailable. 0 means no bound.
	CallTimeout time.Duration
	// ConnectTimeout bounds opening one connection, TLS and start-up
	// included. 0 keeps the URL's connect_timeout (none by default).
	ConnectTimeout time.Duration
	// PlainCallBound bounds the calls with a context.WithTimeout per
	// statement and per wait (timeoutTracer) instead of boundTracer's
	// socket and shared deadlines: the plain way, kept so that
	// BenchmarkCleverPartsRounds (api/) can measure what boundTracer buys
	// (docs/clever-parts.md). Production never sets it.
	PlainCallBound bool
}

// Open connects to the database at url and checks the connection.
func Open(ctx context.Context, url string) (*DB, error) {
	return OpenWith(ctx, url, Options{})
}

// OpenWith is Open with opts.
func OpenWith(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	if opts.ConnectTimeout > 0 {
		cfg.ConnConfig.ConnectTimeout = opts.ConnectTimeout
	}
	if opts.CallTimeout > 0 {
		cfg.ConnConfig.Tracer = newBoundTracer(opts.CallTimeout)
		if opts.PlainCallBound {
			cfg.ConnConfig.Tracer = timeoutTracer{bound: opts.CallTimeout}
		}
	}
	// Aviary's statements are short and planned per request; PostgreSQL's
	// JIT compiles the expressions of any plan its cost model finds large
	// (a count over a week of posts) and spends hundreds of milliseconds
	// doing so. It stays off unless the URL turns it on.
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	db := &DB{pool: pool, bound: opts.CallTimeout}
	if err := db.Ping(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return db, nil
}

// Close releases the connection pool.
func (db *DB) Close() { db.pool.Close() }

// Ping reports whether the database answers (readiness), within the call
// bound if there is one.
func (db *DB) Ping(ctx context.Context) error {
	if db.bound > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, db.bound)
		defer cancel()
	}
	return wrap("ping database", db.pool.Ping(ctx))
}

// NextID allocates a new core id (64-bit, time-ordered).
func (db *DB) NextID(ctx context.Context) (int64, error) {
	var id int64
	err := db.pool.QueryRow(ctx, `SELECT aviary_next_id()`).Scan(&id)
	return id, wrap("allocate id", err)
}

// translate maps driver errors onto the storage sentinels.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return storage.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return fmt.Errorf("%w: %s", storage.ErrConflict, pgErr.ConstraintName)
	}
	if unavailable(err) {
		return fmt.Errorf("%w: %w", storage.ErrUnavailable, err)
	}
	return err
}

// unavailable reports whether err means the server could not be reached or
// did not answer in time, rather than refusing the statement: a failed
// connect, a broken connection, a timeout or an expired deadline (the
// call bound, or the caller's own deadline). A canceled context is not
// one: the caller gave up, the database did not fail.
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return unavailableCode(pgErr.Code)
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr):
		return true
	case pgconn.Timeout(err), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	for _, broken := range []error{io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, pgconn.ErrConnClosed} {
		if errors.Is(err, broken) {
			return true
		}
	}
	return false
}

// unavailableCode reports whether a server error says the server cannot
// take work now: connection exceptions (class 08), too many connections,
// and shutdown or start-up in progress.
func unavailableCode(code string) bool {
	switch code {
	case "53300", "57P01", "57P02", "57P03":
		return true
	}
	return len(code) == 5 && code[:2] == "08"
}

func wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", op, translate(err))
}

// boundTracer bounds every statement and every wait for a pooled
// connection by bound (or a call's longer withBound).
//
// A statement is bounded by a deadline on its connection's socket, set when
// the statement starts and cleared when it ends (its rows closed): a read or
// write past it fails, pgx closes the connection, and the call fails with a
// timeout (storage.ErrUnavailable). This costs no context, allocation or
// goroutine per statement (the deadline is a runtime poller timer); the
// caller's own context still cancels the statement through pgx. A closed
// connection is left alone: pgx's own clean-up (cancel request, terminate,
// drain under its deadline) may be using its socket.
//
// A wait for a connection runs under a deadline shared by all the waits
// that start within the same few milliseconds (waitDeadlines), when the
// caller set no deadline of its own: a request's context is then only
// cancelled when its client goes away, and such a wait ends anyway when a
// connection frees up or at the shared deadline, at most bound plus a
// step later. A caller with a deadline, or a call with a longer bound, gets
// a context.WithTimeout of its own, as the cheaper form could not honour
// both.
type boundTracer struct {
	bound time.Duration
	waits *waitDeadlines
}

func newBoundTracer(bound time.Duration) boundTracer {
	return boundTracer{bound: bound, waits: newWaitDeadlines(bound)}
}

type cancelKey struct{}

// boundKey holds a longer bound for the statements of one call (withBound).
type boundKey struct{}

// SearchCallTimeout bounds the statements of a search or count instead of
// the store's CallTimeout when that is shorter: a count over a week of a
// common word reads a large part of the posts, legitimately longer than a
// primary-key read.
const SearchCallTimeout = 5 * time.Second

// withBound lets the statements run under ctx take up to d, whatever the
// store's own bound.
func withBound(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, boundKey{}, d)
}

// boundOf is the bound of the statements run under ctx, and whether a call
// made it longer than the store's.
func (b boundTracer) boundOf(ctx context.Context) (time.Duration, bool) {
	if d, ok := ctx.Value(boundKey{}).(time.Duration); ok && d > b.bound {
		return d, true
	}
	return b.bound, false
}

// TraceQueryStart implements pgx.QueryTracer.
func (b boundTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	if conn.IsClosed() {
		return ctx
	}
	bound, _ := b.boundOf(ctx)
	_ = conn.PgConn().Conn().SetDeadline(time.Now().Add(bound))
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (boundTracer) TraceQueryEnd(_ context.Context, conn *pgx.Conn, _ pgx.TraceQueryEndData) {
	if conn.IsClosed() {
		return
	}
	_ = conn.PgConn().Conn().SetDeadline(time.Time{})
}

// TraceAcquireStart implements pgxpool.AcquireTracer.
func (b boundTracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	bound, longer := b.boundOf(ctx)
	if _, has := ctx.Deadline(); has || longer || ctx.Err() != nil {
		ctx, cancel := context.WithTimeout(ctx, bound)
		return context.WithValue(ctx, cancelKey{}, cancel)
	}
	return sharedWait{Context: ctx, wait: b.waits.at(time.Now())}
}

// TraceAcquireEnd implements pgxpool.AcquireTracer.
func (boundTracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	if _, shared := ctx.(sharedWait); shared {
		return
	}
	if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); ok {
		cancel()
	}
}

// timeoutTracer bounds every statement and every wait for a pooled
// connection with a context.WithTimeout of its own (the plain way,
// Options.PlainCallBound): what boundTracer replaced, for comparison.
type timeoutTracer struct{ bound time.Duration }

func (t timeoutTracer) start(ctx context.Context) context.Context {
	bound := t.bound
	if d, ok := ctx.Value(boundKey{}).(time.Duration); ok && d > bound {
		bound = d
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	return context.WithValue(ctx, cancelKey{}, cancel)
}

func endTimeout(ctx context.Context) {
	if cancel, ok := ctx.Value(cancelKey{}).(context.CancelFunc); ok {
		cancel()
	}
}

// TraceQueryStart implements pgx.QueryTracer.
func (t timeoutTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return t.start(ctx)
}

// TraceQueryEnd implements pgx.QueryTracer.
func (timeoutTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryEndData) {
	endTimeout(ctx)
}

// TraceAcquireStart implements pgxpool.AcquireTracer.
func (t timeoutTracer) TraceAcquireStart(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireStartData) context.Context {
	return t.start(ctx)
}

// TraceAcquireEnd implements pgxpool.AcquireTracer.
func (timeoutTracer) TraceAcquireEnd(ctx context.Context, _ *pgxpool.Pool, _ pgxpool.TraceAcquireEndData) {
	endTimeout(ctx)
}
