package storage

import "time"

// StreamRule is one filtered-stream rule of an app (docs/streams.md).
type StreamRule struct {
	ID        int64
	AppID     int64
	Value     string
	Tag       string
	CreatedAt time.Time
}
