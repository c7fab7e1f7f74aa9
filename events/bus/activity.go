package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/events"
)

// ActivityKey is the Redis stream of rendered activity events
// (docs/activity.md): the activity sink appends, every API replica reads.
func (b *Bus) ActivityKey() string { return b.prefix + "stream:activity" }

// PublishActivity appends as, in order, to the activity stream (the
// activity sink publishes through an ActivityPublisher, which also puts
// back what a Redis that lost its data took with it).
func (b *Bus) PublishActivity(ctx context.Context, as []events.Activity) error {
	bodies, err := encodeActivities(as)
	if err != nil {
		return err
	}
	_, lost, err := b.addActivities(ctx, "", bodies)
	if err == nil && lost {
		err = fmt.Errorf("publish %d activity events: the stream lost entries while they were added", len(bodies))
	}
	return err
}

// encodeActivities encodes each of as as a stream entry's body.
func encodeActivities(as []events.Activity) ([]string, error) {
	bodies := make([]string, len(as))
	for i, a := range as {
		b, err := json.Marshal(a)
		if err != nil {
			return nil, fmt.Errorf("encode activity of event %d: %w", a.Seq, err)
		}
		bodies[i] = string(b)
	}
	return bodies, nil
}

// publishActivityScript appends ARGV[3..] to the stream KEYS[1] (MAXLEN ~
// ARGV[2]) when it still holds the entry ARGV[1] (no check when ARGV[1] is
// empty) and returns the id of the last entry added; it returns nil, and
// adds nothing, when that entry is gone (Redis lost it, with the stream or
// with an older snapshot). Entries appended after it by others, or a reply
// of ours that was lost after the script ran, are not a loss. One key, so
// it runs on Redis Cluster too.
var publishActivityScript = redis.NewScript(`
if ARGV[1] ~= '' and #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then
  return false
end
local id = ''
for i = 3, #ARGV do
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'a', ARGV[i])
end
return id
`)

// activityPublishChunk is how many entries one script call adds.
const activityPublishChunk = 500

// addActivities appends bodies to the activity stream in chunks: the
// first only when the stream still holds the entry expect (unchecked when
// expect is ""), each later one only when it still holds the previous
// chunk's last; lost when a check failed (that chunk added nothing, and
// what the entry checked stood for is gone). It returns the id of the
// last entry added ("" when none was).
func (b *Bus) addActivities(ctx context.Context, expect string, bodies []string) (newest string, lost bool, err error) {
	key := []string{b.ActivityKey()}
	maxLen := strconv.FormatInt(b.maxLen, 10)
	for start := 0; start < len(bodies); start += activityPublishChunk {
		chunk := bodies[start:min(start+activityPublishChunk, len(bodies))]
		args := make([]any, 0, len(chunk)+2)
		args = append(args, expect, maxLen)
		for _, body := range chunk {
			args = append(args, body)
		}
		id, err := publishActivityScript.Run(ctx, b.rdb, key, args...).Text()
		if errors.Is(err, redis.Nil) {
			return newest, true, nil
		}
		if err != nil {
			return newest, false, fmt.Errorf("publish %d activity events: %w", len(chunk), err)
		}
		newest, expect = id, id
	}
	return newest, false, nil
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
