// Package bus carries what the event half sends between processes through
// Redis (docs/events.md): the dispatcher's filtered-stream matches, read by
// every API replica from one Redis stream, and connection controls
// (terminate these streams), sent to every replica by pub/sub.
//
// Redis is a transport here, never the record: a replica that misses
// messages (Redis restarted, the stream trimmed) catches up from the event
// log in PostgreSQL, which is why every Match carries the log's Seq.
package bus

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/events"
)

// DefaultMaxLen is about how many matches the Redis stream keeps: a reader
// further behind catches up from the log.
const DefaultMaxLen = 100_000

// Bus is the Redis side of the event half.
type Bus struct {
	rdb    redis.UniversalClient
	prefix string
	maxLen int64
	db     int // the client's Redis database number, in the control channel's name
}

// New returns a bus on rdb whose keys start with prefix ("aviary:").
func New(rdb redis.UniversalClient, prefix string) *Bus {
	return &Bus{rdb: rdb, prefix: prefix, maxLen: DefaultMaxLen, db: database(rdb)}
}

// database is the Redis database number rdb selects: a single-node or
// sentinel client's (*redis.Client), a ring's; 0 for a cluster, which
// has only database 0.
func database(rdb redis.UniversalClient) int {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().DB
	case *redis.Ring:
		return c.Options().DB
	}
	return 0
}

// MatchesKey is the Redis stream of matches.
func (b *Bus) MatchesKey() string { return b.prefix + "stream:matches" }

// ControlChannel is the pub/sub channel of connection controls. Redis
// pub/sub channels are server-wide, not per database, so the name carries
// the database number ("aviary:stream:control:0"): deployments (or test
// runs) sharing a server on other databases never hear each other.
func (b *Bus) ControlChannel() string { return b.prefix + "stream:control:" + strconv.Itoa(b.db) }

// EpochKey names the bus's epoch: a random value set by the first reader
// that asks for it. A Redis restarted empty (or flushed) has none, so the
// next reader sets another: a reader that sees the epoch change knows the
// entries it had not yet read may be gone with the old data, even when no
// call of its failed (go-redis retries a command on a new connection).
func (b *Bus) EpochKey() string { return b.prefix + "stream:epoch" }

// Epoch returns the bus's epoch, setting a new one when there is none.
func (b *Bus) Epoch(ctx context.Context) (string, error) {
	pipe := b.rdb.Pipeline()
	pipe.SetNX(ctx, b.EpochKey(), rand.Text(), 0)
	get := pipe.Get(ctx, b.EpochKey())
	if _, err := pipe.Exec(ctx); err != nil {
		return "", fmt.Errorf("read the bus epoch: %w", err)
	}
	return get.Val(), nil
}

// PublishMatches appends ms, in order, to the matches stream.
func (b *Bus) PublishMatches(ctx context.Context, ms []events.Match) error {
	if len(ms) == 0 {
		return nil
	}
	pipe := b.rdb.Pipeline()
	for _, m := range ms {
		body, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encode match of event %d: %w", m.Seq, err)
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: b.MatchesKey(), MaxLen: b.maxLen, Approx: true, Values: []any{"m", body}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("publish %d matches: %w", len(ms), err)
	}
	return nil
}

// LowestMatchSince is the lowest Seq among the first count matches
// published at or after since (a Redis stream id is the millisecond its
// entry was added), 0 when the stream holds none (none published since,
// or Redis lost them). Matches go out in Seq order, but not strictly: a
// dispatcher that lost its cursor's lease may still publish a batch after
// its successor published later ones. A stream's backfill starts there
// when that is older than what was created since: a post matched late
// (a dispatcher's failover) went out live after since, though created
// before.
func (b *Bus) LowestMatchSince(ctx context.Context, since time.Time, count int64) (int64, error) {
	msgs, err := b.rdb.XRangeN(ctx, b.MatchesKey(), fmt.Sprintf("%d-0", since.UnixMilli()), "+", count).Result()
	if err != nil {
		return 0, fmt.Errorf("read the matches published since %s: %w", since.Format(time.RFC3339), err)
	}
	var lowest int64
	for _, msg := range msgs {
		raw, _ := msg.Values["m"].(string)
		var m events.Match
		if json.Unmarshal([]byte(raw), &m) != nil || m.Seq <= 0 {
			continue
		}
		if lowest == 0 || m.Seq < lowest {
			lowest = m.Seq
		}
	}
	return lowest, nil
}

// Delivery is one match read from the stream with its Redis stream id.
type Delivery struct {
	StreamID string
	Match    events.Match
}

// StartID reads the stream from its first entry; LatestID reads only what
// is added after the call.
const (
	StartID  = "0-0"
	LatestID = "$"
)

// LastMatchID is the id of the newest entry of the matches stream, StartID
// when it is empty: a reader that starts there and always passes the last
// id it read misses nothing added after this call. (Reading with LatestID
// again after a block that returned nothing would miss what was added
// between two reads.)
func (b *Bus) LastMatchID(ctx context.Context) (string, error) {
	msgs, err := b.rdb.XRevRangeN(ctx, b.MatchesKey(), "+", "-", 1).Result()
	if err != nil {
		return "", fmt.Errorf("read the newest match id: %w", err)
	}
	if len(msgs) == 0 {
		return StartID, nil
	}
	return msgs[0].ID, nil
}

// ReadMatches returns up to count matches after the stream id after (a
// Delivery's StreamID, StartID or LatestID), waiting up to block for the
// first; none (and no error) when block passes. A malformed entry is
// skipped with its id so the reader moves on.
func (b *Bus) ReadMatches(ctx context.Context, after string, block time.Duration, count int64) ([]Delivery, error) {
	res, err := b.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{b.MatchesKey(), after}, Count: count, Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read matches after %s: %w", after, err)
	}
	var out []Delivery
	for _, s := range res {
		for _, msg := range s.Messages {
			d := Delivery{StreamID: msg.ID}
			raw, _ := msg.Values["m"].(string)
			if json.Unmarshal([]byte(raw), &d.Match) != nil {
				d.Match = events.Match{}
			}
			out = append(out, d)
		}
	}
	return out, nil
}

// Control kinds.
const (
	// Terminate ends streaming connections: those named in ConnectionIDs,
	// or every one of AppID (and of Endpoint when set).
	Terminate = "terminate"
)

// Control is an instruction to every API replica about its connections.
type Control struct {
	Kind          string   `json:"kind"`
	AppID         int64    `json:"app_id"`
	Endpoint      string   `json:"endpoint,omitempty"`
	ConnectionIDs []string `json:"connection_ids,omitempty"`
}

// PublishControl sends c to every replica subscribed now. Pub/sub is best
// effort: replicas also poll the connection records (a lost control is
// carried out at the next poll).
func (b *Bus) PublishControl(ctx context.Context, c Control) error {
	body, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode control: %w", err)
	}
	if err := b.rdb.Publish(ctx, b.ControlChannel(), body).Err(); err != nil {
		return fmt.Errorf("publish control %s: %w", c.Kind, err)
	}
	return nil
}

// Controls subscribes to the control channel until ctx ends; go-redis
// re-subscribes after a connection loss by itself. Malformed messages are
// dropped.
func (b *Bus) Controls(ctx context.Context) <-chan Control {
	sub := b.rdb.Subscribe(ctx, b.ControlChannel())
	out := make(chan Control, 64)
	go func() {
		defer close(out)
		defer sub.Close()
		ch := sub.Channel()
		for {
			select {
			case <-ctx.Done():
				return
			case msg, ok := <-ch:
				if !ok {
					return
				}
				var c Control
				if json.Unmarshal([]byte(msg.Payload), &c) != nil {
					continue
				}
				select {
				case out <- c:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}
