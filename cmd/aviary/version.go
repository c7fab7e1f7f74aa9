package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api"
)

// version is set at link time (-ldflags "-X main.version=…": make build,
// the Dockerfile); empty in a plain go build.
var version string

// buildVersion is this binary's version: the one set at link time, else
// the module version when built from a tagged module, else the VCS
// revision (12 characters, "+dirty" when the tree had changes), else
// "dev". The API sends it in x-aviary-version and /_aviary/health.
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, dirty string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return "dev"
	}
	return rev[:min(12, len(rev))] + dirty
}

// queueDepths reports every asynq queue's depth through inspector.
func queueDepths(inspector *asynq.Inspector) api.QueueInspector {
	return func(ctx context.Context) ([]api.QueueDepth, error) {
		names, err := inspector.Queues()
		if err != nil {
			return nil, fmt.Errorf("list queues: %w", err)
		}
		out := make([]api.QueueDepth, 0, len(names))
		for _, name := range names {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			q, err := inspector.GetQueueInfo(name)
			if err != nil {
				return nil, fmt.Errorf("queue %s: %w", name, err)
			}
			out = append(out, api.QueueDepth{Name: name, Size: q.Size, Pending: q.Pending, Active: q.Active,
				Scheduled: q.Scheduled, Retry: q.Retry, Archived: q.Archived, LatencyMS: q.Latency.Milliseconds(), Paused: q.Paused})
		}
		return out, nil
	}
}
