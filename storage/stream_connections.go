package storage

import (
	"errors"
	"time"
)

// StreamConnection is one connection to a streaming endpoint, open or
// closed (docs/streams.md).
type StreamConnection struct {
	// ID is the connection's UUID.
	ID       string
	AppID    int64
	Endpoint string
	ClientIP string
	// Replica names the API replica (its hub) holding the connection.
	Replica          string
	ConnectedAt      time.Time
	DisconnectedAt   *time.Time
	DisconnectReason string
}

// Streaming endpoint ids, as the connections endpoints name them.
const (
	EndpointFilteredStream = "filtered_stream"
	// EndpointActivityStream is GET /2/activity/stream (docs/activity.md).
	EndpointActivityStream = "activity_stream"
)

// StreamEndpoints are the endpoint ids the connections endpoints accept
// (the platform's list and activity_stream; Aviary serves filtered_stream
// and activity_stream).
var StreamEndpoints = []string{
	"filtered_stream", "activity_stream", "sample_stream", "sample10_stream", "firehose_stream", "tweets_compliance_stream",
	"users_compliance_stream", "tweet_label_stream", "firehose_stream_lang_en", "firehose_stream_lang_ja",
	"firehose_stream_lang_ko", "firehose_stream_lang_pt", "likes_firehose_stream", "likes_sample10_stream",
	"likes_compliance_stream",
}

// Why a streaming connection ended (StreamConnection.DisconnectReason).
const (
	DisconnectClient      = "client_disconnected"
	DisconnectTerminated  = "terminated"
	DisconnectOperational = "operational_disconnect"
	DisconnectSlowClient  = "client_too_slow"
	DisconnectHeartbeat   = "heartbeat_lost"
)

// StreamConnectionStale is how long a connection whose replica stopped
// renewing its heartbeat still counts as open.
const StreamConnectionStale = 30 * time.Second

// ErrTooManyConnections is returned when an app already holds as many
// open connections as it may.
var ErrTooManyConnections = errors.New("too many streaming connections")

// Connection list statuses (GET /2/connections status).
const (
	ConnectionsActive   = "active"
	ConnectionsInactive = "inactive"
	ConnectionsAll      = "all"
)

// ConnectionQuery selects an app's connections, newest first.
type ConnectionQuery struct {
	AppID     int64
	Status    string
	Endpoints []string
	Limit     int
	// After is the id of the last connection of the previous page ("": the
	// first page).
	After string
}

// ConnectionTermination selects the open connections of an app to end:
// every one, those of Endpoint, or those whose ids are in IDs.
type ConnectionTermination struct {
	AppID    int64
	Endpoint string
	IDs      []string
}
