package main

import (
	"context"

	apifaults "github.com/aviary-dev/aviary/api/faults"
	"github.com/aviary-dev/aviary/domain/faults"
	"github.com/aviary-dev/aviary/storage/faultsredis"
	"github.com/aviary-dev/aviary/web/console"
)

// sandboxDeps are the console's faults and state reset, and the blob
// reader and stream termination of its media and streams pages (web/ does
// not import api/ nor storage/blob: cmd adapts them).
type sandboxDeps struct {
	faults     console.Faults
	reset      console.ResetState
	openBlob   console.OpenBlob
	endStreams console.EndStreams
	// ops and rateLimits feed the operations pages (console_ops.go).
	ops        console.Ops
	rateLimits console.RateLimits
}

// consoleSandbox gives the console the faults store of /_aviary/faults
// (reloading this process's hook after a change, as the endpoints do) and
// the reset of `aviary admin reset` and POST /_aviary/state/reset.
func consoleSandbox(b *backends, m *apifaults.Module) sandboxDeps {
	svc := &stateService{db: b.db, rdb: b.redis, clearers: stateClearers(b.redis)}
	return sandboxDeps{
		faults: reloadingFaults{Store: faultsStore(b), reload: m.Reload},
		reset: func(ctx context.Context) (console.ResetResult, error) {
			res, err := svc.ResetState(ctx, nil)
			out := console.ResetResult{Surfaces: res.Surfaces, Cleared: res.Cleared}
			for _, n := range res.Removed {
				out.Removed += n
			}
			if err == nil {
				m.Reload(ctx)
			}
			return out, err
		},
	}
}

// reloadingFaults is the faults store that has the API's hook read the
// faults again after each change.
type reloadingFaults struct {
	*faultsredis.Store
	reload func(ctx context.Context)
}

func (f reloadingFaults) Create(ctx context.Context, x faults.Fault) (faults.Fault, error) {
	out, err := f.Store.Create(ctx, x)
	f.reload(ctx)
	return out, err
}

func (f reloadingFaults) Delete(ctx context.Context, id string) (bool, error) {
	ok, err := f.Store.Delete(ctx, id)
	f.reload(ctx)
	return ok, err
}

func (f reloadingFaults) Clear(ctx context.Context, appID int64) (int, error) {
	n, err := f.Store.Clear(ctx, appID)
	f.reload(ctx)
	return n, err
}
