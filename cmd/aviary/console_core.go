package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/web/console"
)

// consoleOpenBlob lets the console's media page stream previews from the
// blob store (web/ does not import storage/blob): a missing object is
// storage.ErrNotFound.
func consoleOpenBlob(store blob.Store) console.OpenBlob {
	return func(ctx context.Context, key string) (io.ReadCloser, int64, error) {
		body, info, err := store.Get(ctx, key)
		if errors.Is(err, blob.ErrNotFound) {
			return nil, 0, fmt.Errorf("media object %s: %w", key, storage.ErrNotFound)
		}
		if err != nil {
			return nil, 0, err
		}
		return body, info.Size, nil
	}
}

// consoleEndStreams lets the console's Kill end a connection on whichever
// replica holds it: the hub's Terminate, which ends this process's
// streams and publishes the control on the Redis bus to the others, as
// DELETE /2/connections does.
func consoleEndStreams(hub *streams.Hub) console.EndStreams {
	if hub == nil {
		return nil
	}
	return func(ctx context.Context, appID int64, connIDs []string) error {
		return hub.Terminate(ctx, bus.Control{AppID: appID, ConnectionIDs: connIDs})
	}
}
