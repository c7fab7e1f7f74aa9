package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/workers/dispatch"
)

// benchEvents is the log both benchmarks read through, once per
// iteration.
const benchEvents = 50_000

// benchLog fills a fresh database with benchEvents post.create events of a
// realistic payload (about 400 bytes) and returns it.
func benchLog(b *testing.B) *postgres.DB {
	b.Helper()
	db, url := storagetest.NewDB(b)
	payload, err := json.Marshal(events.Post{ID: 1876543210987654321, AuthorID: 1876543210987654000, AuthorUsername: "someone_posting",
		AppID: 1876543210987650000, Text: "A post of ordinary length with a #hashtag, a mention of @someone_else and a link https://t.co/abcdef",
		Lang: "en", ConversationID: 1876543210987654321, Mentions: []string{"someone_else"}, Hashtags: []string{"hashtag"},
		URLTerms: []string{"example.com/page", "example.com"}, CreatedAt: time.Now()})
	if err != nil {
		b.Fatal(err)
	}
	pool := storagetest.BarePool(b, url)
	if _, err := pool.Exec(b.Context(), `INSERT INTO events (seq, type, app_id, user_id, subject_id, payload)
		SELECT nextval('events_seq'), 'post.create', 1, 2, g, $2::jsonb FROM generate_series(1, $1::int) g`,
		benchEvents, string(payload)); err != nil {
		b.Fatalf("fill the log: %v", err)
	}
	if _, err := pool.Exec(b.Context(), `VACUUM ANALYZE events`); err != nil {
		b.Fatalf("vacuum: %v", err)
	}
	return db
}

// benchSink is redisSink that reports when it published the last event.
type benchSink struct {
	redisSink
	last int64
	done chan struct{}
}

func (s *benchSink) Handle(ctx context.Context, batch []events.Event) error {
	if err := s.redisSink.Handle(ctx, batch); err != nil {
		return err
	}
	if batch[len(batch)-1].Seq >= s.last {
		close(s.done)
	}
	return nil
}

func reportRate(b *testing.B) {
	b.ReportMetric(float64(benchEvents)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDispatcher: events per second through a Dispatcher (lease,
// batches of 500, the cursor committed at most every CommitEvery while
// batches come full) to a sink that publishes every
// event to a Redis stream through one pipeline per batch.
func BenchmarkDispatcher(b *testing.B) {
	db := benchLog(b)
	rdb, prefix := storagetest.RedisPrefix(b)
	head, err := db.EventHead(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		sink := &benchSink{redisSink: redisSink{rdb: rdb, key: prefix + "dispatcher"}, last: head, done: make(chan struct{})}
		d := &dispatch.Dispatcher{Log: db, Cursors: db, Listen: db, Sinks: []dispatch.Sink{sink},
			Cursor: fmt.Sprintf("bench-%d", i)}
		ctx, cancel := context.WithCancel(b.Context())
		stopped := make(chan struct{})
		go func() { defer close(stopped); _ = d.Run(ctx) }()
		<-sink.done
		cancel()
		<-stopped
		b.StopTimer()
		rdb.Del(b.Context(), sink.key)
		b.StartTimer()
	}
	reportRate(b)
}

// BenchmarkBareLoop: the same log read with EventsAfter in batches of 500
// and every event XADDed to Redis through one pipeline per batch, with
// nothing else (no lease, no cursor).
func BenchmarkBareLoop(b *testing.B) {
	db := benchLog(b)
	rdb, prefix := storagetest.RedisPrefix(b)
	ctx := b.Context()
	key := prefix + "bare"
	b.ResetTimer()
	for range b.N {
		var after int64
		for {
			batch, err := db.EventsAfter(ctx, after, dispatch.DefaultBatch)
			if err != nil {
				b.Fatal(err)
			}
			if len(batch) == 0 {
				break
			}
			pipe := rdb.Pipeline()
			for _, e := range batch {
				pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []any{"seq", e.Seq, "type", string(e.Type), "p", e.Payload}})
			}
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
			after = batch[len(batch)-1].Seq
		}
		b.StopTimer()
		rdb.Del(ctx, key)
		b.StartTimer()
	}
	reportRate(b)
}
