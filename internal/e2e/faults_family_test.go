package e2e

import (
	"context"
	"net/http"
	"time"
)

// The fault matrix (issue 32, docs/fault-matrix.md) runs a workload of
// every job family against real processes (two API replicas, two workers,
// PostgreSQL, Redis and MinIO of its own) while it injects faults, then
// checks that everything accepted reached a final state exactly once.
//
// A family is one kind of work: it submits work while the faults happen
// and, once they are over, waits for what it submitted to settle and
// checks it. The matrix (faults_matrix_test.go) owns the processes and the
// faults; the families (faults_jobs_test.go: compliance, media, audiences,
// catalogs, insights; faults_events_test.go: the event dispatcher, webhook
// delivery, streams) own their work and its invariants.
type family interface {
	// name is the family's row in the report ("compliance", "webhooks"...).
	name() string
	// prepare sets up what run needs (rules, webhooks, catalogs, receivers)
	// before any fault; an error ends the matrix.
	prepare(ctx context.Context, env *matrixEnv) error
	// run submits work through env's API replicas until ctx is done. It
	// runs in its own goroutine while faults happen, so it must not call
	// t.Fatal: a request that fails (a replica killed, a dependency away)
	// is retried the way a client would, or recorded as not accepted.
	// Work whose answer was lost (sent, no answer) is "unknown": it may or
	// may not exist, and when it does it must settle like the rest.
	run(ctx context.Context, env *matrixEnv)
	// settle waits, until ctx's deadline, for everything accepted to reach
	// a final state, then checks the family's invariants against the
	// records and what run submitted.
	settle(ctx context.Context, env *matrixEnv) familyReport
}

// matrixEnv is what a family sees of the system under faults.
type matrixEnv struct {
	// s is the stack: the bootstrap credentials (s.creds), the database
	// (s.db, s.dbURL, s.query), the processes' settings (s.env) and the
	// one-shot commands (s.run). s.baseURL is the first API replica.
	s *stack
	// apis are the base URLs of every API replica; any of them may be down
	// (killed, restarting) at any moment.
	apis []string
	// client has a per-request timeout, so a frozen dependency costs a
	// request a bounded time.
	client *http.Client
	// webhookAllow is what the stack's AVIARY_WEBHOOK_ALLOW admits
	// (receivers listen on 127.0.0.1).
	webhookAllow string
	// images is the base URL of an image server on the stack's fetch
	// allow-list (catalog image checks): /ok.png is a valid 600x600 PNG.
	images string
}

// api is the base URL of replica i modulo the replicas (round robin).
func (e *matrixEnv) api(i int) string { return e.apis[i%len(e.apis)] }

// familyReport is one family's row of the matrix's report.
type familyReport struct {
	family string
	// submitted requests; accepted: answered 2xx; unknown: sent and not
	// answered (the replica died, the connection was cut).
	submitted, accepted, unknown int
	// final: accepted (or unknown and found) items in a final state;
	// exactlyOnce: of those, applied once (result counts equal the input).
	final, exactlyOnce int
	// lost: accepted items that never reached a final state or whose
	// effect is missing; duplicated: items applied more than once (for an
	// at-least-once delivery, the redeliveries, reported, not failed).
	lost, duplicated int
	// settled: when the last accepted item was seen final.
	settled time.Time
	// problems are broken invariants, each naming the item; a report with
	// problems fails the matrix.
	problems []string
	// notes are figures worth printing (redeliveries, recovery times).
	notes []string
}
