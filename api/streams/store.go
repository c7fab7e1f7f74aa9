package streams

import (
	"context"

	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the record access of the stream and connections endpoints
// (storage/postgres.DB satisfies it).
type Store interface {
	RulesStore
	render.Store
	ConnectionStore
}

// ConnectionStore keeps the streaming connection records.
type ConnectionStore interface {
	// OpenStreamConnection records c open unless its app holds limit open
	// connections already (storage.ErrTooManyConnections).
	OpenStreamConnection(ctx context.Context, c storage.StreamConnection, limit int) (storage.StreamConnection, error)
	CloseStreamConnection(ctx context.Context, id, reason string) error
	// HeartbeatStreamConnections renews ids and returns those that must
	// end, each with why (storage.DisconnectTerminated, or
	// storage.DisconnectHeartbeat for a record no longer open).
	HeartbeatStreamConnections(ctx context.Context, ids []string) (map[string]string, error)
	RequestStreamTermination(ctx context.Context, t storage.ConnectionTermination) ([]string, error)
	StreamConnections(ctx context.Context, q storage.ConnectionQuery) ([]storage.StreamConnection, error)
}

// RuleSource reads the stream rules of apps (the rules' store).
type RuleSource interface {
	StreamRulesOf(ctx context.Context, appIDs []int64) ([]storage.StreamRule, error)
}
