package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/validation"
)

// newStreams builds the streams feature and starts this process's hub
// (stopped by serveHTTP before the server's Shutdown, and by the backends'
// closers on an early exit).
func newStreams(cfg *config, b *backends, errs apierr.Writer, val *validation.Validator, log *slog.Logger) (*streams.Module, error) {
	hub := streams.NewHub(streams.HubDeps{Bus: bus.New(b.redis, eventBusPrefix), Log: b.db, Rules: b.db, Conns: b.db,
		Replica: replicaName(), Logger: log.With("component", "stream-hub")})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hub.Start(ctx); err != nil {
		return nil, err
	}
	b.closers = append(b.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		hub.Stop(ctx)
	})
	return streams.New(streams.Deps{Store: b.apiDB, MediaURLs: render.NewMediaURLs(cfg.PublicURL), Hub: hub, Log: b.db, Rules: b.db, Errors: errs, Problems: errs, Validator: val, Logger: log,
		RulesMax: cfg.StreamRulesMax, RuleMaxLength: cfg.StreamRuleMaxLength, Connections: cfg.StreamConnections, KeepAlive: cfg.StreamKeepAlive}), nil
}

// replicaName names this API process in the connection records.
func replicaName() string {
	host, err := os.Hostname()
	if err != nil {
		host = "aviary"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}
