// Command job is the ceiling of the compliance job path (docs/benchmarks.md):
// a bare program that streams an upload file of post ids (one per line),
// resolves them in batches with the worker's join (posts JOIN users ON
// id = ANY($1), only rows that need action), keeps up to -inflight lookups running at once, and writes
// one JSON line per id that needs action, in upload order, to -out through a
// buffered writer. Nothing else: no queue, no blob store, no job record, no
// progress heartbeats. It prints {"lines":N,"result_lines":M,"seconds":S}:
// S runs from opening the database to the last byte flushed.
//
//	go run ./scripts/ceiling/job -db postgres://... -in upload.txt -out result.jsonl
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"log"
	"os"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

type action struct {
	created, redacted time.Time
	reason            string
}

type batch struct {
	ids   []int64
	found map[int64]action
	err   error
	done  chan struct{}
}

// lookup is the worker's join, returning only the rows that need action
// (most ids of a job are unknown or need none: sending them is avoidable).
const lookup = `SELECT p.id, p.created_at, p.deleted_at, u.deleted_at, u.suspended_at, u.deactivated_at, u.protected_at
	FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ANY($1)
	AND (p.deleted_at IS NOT NULL OR u.deleted_at IS NOT NULL OR u.suspended_at IS NOT NULL
	     OR u.deactivated_at IS NOT NULL OR u.protected_at IS NOT NULL)`

func main() {
	dbURL := flag.String("db", "", "PostgreSQL URL (the Aviary database)")
	in := flag.String("in", "", "upload file: one id per line")
	outPath := flag.String("out", os.DevNull, "result file (JSON lines)")
	size := flag.Int("batch", 10000, "ids per lookup (the worker's batch size)")
	inflight := flag.Int("inflight", 2, "lookups running at once")
	flag.Parse()
	ctx := context.Background()
	start := time.Now()
	pool, err := pgxpool.New(ctx, *dbURL)
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	of, err := os.Create(*outPath)
	if err != nil {
		log.Fatal(err)
	}
	out := bufio.NewWriterSize(of, 256<<10)

	// The reader cuts batches and starts each lookup when a slot is free;
	// the writer below takes them in order.
	pending := make(chan *batch, *inflight-1)
	slots := make(chan struct{}, *inflight)
	lines := 0
	go func() {
		defer close(pending)
		sc := bufio.NewScanner(f)
		ids := make([]int64, 0, *size)
		flush := func() {
			b := &batch{ids: ids, done: make(chan struct{})}
			slots <- struct{}{}
			go func() { b.found, b.err = resolve(ctx, pool, b.ids); <-slots; close(b.done) }()
			pending <- b
			ids = make([]int64, 0, *size)
		}
		for sc.Scan() {
			lines++
			if id, err := strconv.ParseInt(string(sc.Bytes()), 10, 64); err == nil && id > 0 {
				if ids = append(ids, id); len(ids) == *size {
					flush()
				}
			}
		}
		if err := sc.Err(); err != nil {
			log.Fatal(err)
		}
		if len(ids) > 0 {
			flush()
		}
	}()
	results := 0
	var line []byte
	for b := range pending {
		<-b.done
		if b.err != nil {
			log.Fatal(b.err)
		}
		for _, id := range b.ids {
			a, ok := b.found[id]
			if !ok {
				continue
			}
			line = append(line[:0], `{"id":"`...)
			line = strconv.AppendInt(line, id, 10)
			line = append(line, `","action":"delete","created_at":"`...)
			line = a.created.UTC().AppendFormat(line, "2006-01-02T15:04:05.000Z")
			line = append(line, `","redacted_at":"`...)
			line = a.redacted.UTC().AppendFormat(line, "2006-01-02T15:04:05.000Z")
			line = append(line, `","reason":"`...)
			line = append(line, a.reason...)
			line = append(line, "\"}\n"...)
			if _, err := out.Write(line); err != nil {
				log.Fatal(err)
			}
			results++
		}
	}
	if err := out.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := of.Close(); err != nil {
		log.Fatal(err)
	}
	secs := time.Since(start).Seconds()
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"lines": lines, "result_lines": results, "seconds": secs})
}

// resolve runs the join for one batch and keeps the ids that need action: a
// deleted post, or an author deleted, suspended, deactivated or protected.
func resolve(ctx context.Context, pool *pgxpool.Pool, ids []int64) (map[int64]action, error) {
	rows, err := pool.Query(ctx, lookup, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	found := make(map[int64]action)
	for rows.Next() {
		var id int64
		var created time.Time
		var postDeleted, userDeleted, suspended, deactivated, protected *time.Time
		if err := rows.Scan(&id, &created, &postDeleted, &userDeleted, &suspended, &deactivated, &protected); err != nil {
			return nil, err
		}
		for _, c := range []struct {
			at     *time.Time
			reason string
		}{{postDeleted, "deleted"}, {userDeleted, "deleted"}, {suspended, "suspended"}, {deactivated, "deactivated"}, {protected, "protected"}} {
			if c.at != nil {
				found[id] = action{created, *c.at, c.reason}
				break
			}
		}
	}
	return found, rows.Err()
}
