package main

import (
	"context"
	"net/http"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/console"
)

// addConsoleMounts mounts the developer console (web/console,
// docs/console.md) and the htmx it loads on the API listener. queues is
// the source /_aviary/health reads the queue depths from.
func addConsoleMounts(cfg *config, b *backends, kit *web.Kit, pub *auth.Publisher, queues api.QueueInspector, sandbox sandboxDeps, m map[string]http.Handler) error {
	c, err := console.New(console.Config{
		Store: b.apiDB, Kit: kit, Now: time.Now, QueueDashboard: cfg.AdminPassword != "",
		Notify: console.Notify{BearerRevoked: pub.BearerRevoked, AccessTokenRevoked: pub.AccessTokenRevoked,
			OAuth2Revoked: pub.OAuth2Revoked, UserChanged: pub.UserChanged},
		Queues: consoleQueues(queues),
		Faults: sandbox.faults, ResetState: sandbox.reset, Usage: b.apiDB,
		OpenBlob: sandbox.openBlob, EndStreams: sandbox.endStreams,
		Ops: sandbox.ops, RateLimits: sandbox.rateLimits,
	})
	if err != nil {
		return err
	}
	h := c.Handler()
	for _, p := range console.Paths {
		m[p] = h
	}
	m[web.HTMXPath] = web.HTMX()
	return nil
}

// consoleQueues adapts the health endpoint's queue inspector to the
// console's (web/ does not import api/).
func consoleQueues(queues api.QueueInspector) func(ctx context.Context) ([]console.Queue, error) {
	if queues == nil {
		return nil
	}
	return func(ctx context.Context) ([]console.Queue, error) {
		qs, err := queues(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]console.Queue, len(qs))
		for i, q := range qs {
			out[i] = console.Queue{Name: q.Name, Size: q.Size, Pending: q.Pending, Active: q.Active, Scheduled: q.Scheduled,
				Retry: q.Retry, Archived: q.Archived, LatencyMS: q.LatencyMS, Paused: q.Paused}
		}
		return out, nil
	}
}
