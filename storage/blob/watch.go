package blob

import "context"

// Watcher is an optional capability of some stores' deployments (today only
// MinIO, see package miniowatch): it pushes the keys of objects created under
// a prefix, so a worker can react to an upload without waiting for its next
// poll.
//
// Notifications are best effort: they may be delayed, duplicated or lost
// (for example while the watcher reconnects). Callers must keep a polling
// fallback and treat a received key only as a hint to look sooner.
type Watcher interface {
	// WatchCreated returns a channel of keys of newly created (or
	// overwritten) objects under prefix. The channel is closed once ctx is
	// done; an error is returned only if watching cannot start at all.
	WatchCreated(ctx context.Context, prefix string) (<-chan string, error)
}
