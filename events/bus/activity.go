package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/events"
)

// ActivityKey is the Redis stream of rendered activity events
// (docs/activity.md): the activity sink appends, every API replica reads.
func (b *Bus) ActivityKey() string { return b.prefix + "stream:activity" }

// PublishActivity appends as, in order, to the activity stream.
func (b *Bus) PublishActivity(ctx context.Context, as []events.Activity) error {
	if len(as) == 0 {
		return nil
	}
	pipe := b.rdb.Pipeline()
	for _, a := range as {
		body, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode activity of event %d: %w", a.Seq, err)
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: b.ActivityKey(), MaxLen: b.maxLen, Approx: true, Values: []any{"a", body}})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("publish %d activity events: %w", len(as), err)
	}
	return nil
}

// ActivityDelivery is one activity read from the stream with its Redis
// stream id.
type ActivityDelivery struct {
	StreamID string
	Activity events.Activity
}

// LastActivityID is the id of the newest entry of the activity stream,
// StartID when it is empty (see LastMatchID).
func (b *Bus) LastActivityID(ctx context.Context) (string, error) {
	msgs, err := b.rdb.XRevRangeN(ctx, b.ActivityKey(), "+", "-", 1).Result()
	if err != nil {
		return "", fmt.Errorf("read the newest activity id: %w", err)
	}
	if len(msgs) == 0 {
		return StartID, nil
	}
	return msgs[0].ID, nil
}

// ReadActivity returns up to count activities after the stream id after,
// waiting up to block for the first; none (and no error) when block
// passes. A malformed entry comes with a zero Activity so the reader moves
// on.
func (b *Bus) ReadActivity(ctx context.Context, after string, block time.Duration, count int64) ([]ActivityDelivery, error) {
	res, err := b.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{b.ActivityKey(), after}, Count: count, Block: block}).Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read activity after %s: %w", after, err)
	}
	var out []ActivityDelivery
	for _, s := range res {
		out = appendActivities(out, s.Messages)
	}
	return out, nil
}

// appendActivities decodes msgs onto out; an entry that does not decode
// keeps its stream id with an empty Activity (readers skip it and move on).
func appendActivities(out []ActivityDelivery, msgs []redis.XMessage) []ActivityDelivery {
	for _, msg := range msgs {
		d := ActivityDelivery{StreamID: msg.ID}
		raw, _ := msg.Values["a"].(string)
		if json.Unmarshal([]byte(raw), &d.Activity) != nil {
			d.Activity = events.Activity{}
		}
		out = append(out, d)
	}
	return out
}

// ActivitySince returns up to count activities added to the stream at or
// after since (Redis stream ids are their millisecond of addition), after
// the stream id after when it is not "" (paging), oldest first: the
// activity stream's backfill. The stream keeps about DefaultMaxLen
// entries, which bounds how far back it reaches.
func (b *Bus) ActivitySince(ctx context.Context, since time.Time, after string, count int64) ([]ActivityDelivery, error) {
	start := fmt.Sprintf("%d-0", since.UnixMilli())
	if after != "" {
		start = "(" + after
	}
	msgs, err := b.rdb.XRangeN(ctx, b.ActivityKey(), start, "+", count).Result()
	if err != nil {
		return nil, fmt.Errorf("read activity since %s: %w", since.Format(time.RFC3339), err)
	}
	return appendActivities(make([]ActivityDelivery, 0, len(msgs)), msgs), nil
}
