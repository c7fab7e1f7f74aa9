package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/state"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// seedTexts are the texts of every post, in id order, and the seeded
// usernames: what a seed must reproduce.
func seedTexts(t *testing.T, db *postgres.DB, res seedResult) []string {
	t.Helper()
	var out strings.Builder
	if err := db.ExportState(t.Context(), &out); err != nil {
		t.Fatal(err)
	}
	snap, err := postgres.ReadSnapshot(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, tab := range snap.Tables {
		if tab.Name == "posts" {
			for _, r := range tab.Rows {
				texts = append(texts, extractField(string(r), "text"))
			}
		}
	}
	slices.Sort(texts)
	return append(texts, res.Users...)
}

// extractField reads a string field of a JSON row.
func extractField(row, field string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(row), &m); err != nil {
		return ""
	}
	v, _ := m[field].(string)
	return v
}

func TestAdminSeedDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, _ := storagetest.NewDB(t)
	b, _ := storagetest.NewDB(t)
	blobsA, blobsB := testBlobs(t), testBlobs(t)
	resA, err := seedState(ctx, a, blobsA, 42)
	if err != nil {
		t.Fatalf("seed: %v", err)
	}
	resB, err := seedState(ctx, b, blobsB, 42)
	if err != nil {
		t.Fatalf("seed again: %v", err)
	}
	if resA.Posts != seedPosts || len(resA.Users) != seedUsers || len(resA.AdAccounts) != seedAdAccounts ||
		resA.Campaigns != seedAdAccounts*seedCampaigns || resA.LineItems != resA.Campaigns*seedLineItems || resA.Likes == 0 || resA.Follows == 0 {
		t.Errorf("seed 42 = %+v, want the whole fixture", resA)
	}
	ta, tb := seedTexts(t, a, resA), seedTexts(t, b, resB)
	if !slices.Equal(ta, tb) || resA.Likes != resB.Likes || resA.Follows != resB.Follows {
		t.Errorf("seed 42 twice differs:\n%v\n%v", ta, tb)
	}
	if !strings.Contains(strings.Join(ta, " "), "#") || !strings.Contains(strings.Join(ta, " "), "cc @") {
		t.Errorf("seeded texts have no hashtags or mentions: %v", ta)
	}
	if len(resA.MediaPosts) != seedPosts/seedMediaEvery || resA.Media < len(resA.MediaPosts) {
		t.Errorf("seed 42 put %d photos on %d posts, want photos on every %dth of %d posts", resA.Media, len(resA.MediaPosts), seedMediaEvery, seedPosts)
	}
	photosA, photosB := seedPhotoBytes(t, a, blobsA, resA), seedPhotoBytes(t, b, blobsB, resB)
	if len(photosA) != resA.Media || !slices.EqualFunc(photosA, photosB, bytes.Equal) {
		t.Errorf("seed 42 twice made different photos (%d and %d files)", len(photosA), len(photosB))
	}
	if _, err := seedState(ctx, a, testBlobs(t), 42); err == nil || !strings.Contains(err.Error(), "already applied") {
		t.Errorf("seed 42 again in the same database: %v, want already applied", err)
	}
	resC, err := seedState(ctx, a, blobsA, 7)
	if err != nil {
		t.Fatalf("seed 7: %v", err)
	}
	if slices.Equal(resC.Users, resA.Users) {
		t.Errorf("seeds 7 and 42 made the same users %v", resC.Users)
	}
	if slices.EqualFunc(seedPhotoBytes(t, a, blobsA, resC), photosA, bytes.Equal) {
		t.Error("seeds 7 and 42 made the same photos")
	}
}

// TestAdminStateResetExportImport: bootstrap, seed, export to a file,
// reset (bootstrap survives with the same credentials, rate limits are
// cleared), import: the same snapshot again.
func TestAdminStateResetExportImport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	// A Redis database of its own: the reset removes the deployment's
	// keys ("aviary:rl:*", …) by pattern.
	addr, n := storagetest.RedisDB(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr, DB: n})
	t.Cleanup(func() { rdb.Close() })
	boot, err := bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := seedState(ctx, db, testBlobs(t), 3); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "state.json")
	if _, err := runStateCommand(ctx, nil, db, "export", stateTestFlags(t, "--out", file), nil, nil); err != nil {
		t.Fatalf("export: %v", err)
	}
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(before), `"format":"aviary-state"`) {
		t.Fatalf("snapshot starts %.200s", before)
	}

	key := "aviary:rl:test"
	if err := rdb.Set(ctx, key, 1, 0).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	svc := &stateService{db: db, rdb: rdb, clearers: stateClearers(rdb)}
	res, err := svc.ResetState(ctx, stateTestFlags(t, "--surface", "all").St.Surfaces)
	if err != nil {
		t.Fatalf("reset: %v", err)
	}
	if res.Removed["posts"] != seedPosts || !slices.Equal(res.Cleared, []string{"rate-limits", "usage-counters", "ops-records", "faults"}) {
		t.Errorf("reset = %+v, want the seeded posts removed and rate limits, usage counters and faults cleared", res)
	}
	if n, _ := rdb.Exists(ctx, key).Result(); n != 0 {
		t.Errorf("rate-limit key %s survived the reset", key)
	}
	again, err := bootstrap(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if again != boot {
		t.Errorf("bootstrap after reset = %+v, want the same identity %+v", again, boot)
	}
	if _, err := svc.ResetState(ctx, []string{"bogus"}); err == nil {
		t.Error("reset of an unknown surface succeeded")
	}

	out, err := runStateCommand(ctx, nil, db, "import", stateTestFlags(t, "--in", file), nil, nil)
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	if out.(importResult).Rows["posts"] != seedPosts {
		t.Errorf("import = %+v", out)
	}
	second := filepath.Join(t.TempDir(), "again.json")
	if _, err := runStateCommand(ctx, nil, db, "export", stateTestFlags(t, "--out", second), nil, nil); err != nil {
		t.Fatalf("export again: %v", err)
	}
	after, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if tablesOf(string(before)) != tablesOf(string(after)) {
		t.Error("the snapshot after export, reset and import differs from the first")
	}
}

// stateTestFlags parses the state commands' flags only (the whole
// adminFlags set is the business of admin.go's tests).
func stateTestFlags(t *testing.T, args ...string) adminFlags {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o adminFlags
	o.St.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	return o
}

// tablesOf is a snapshot's tables: its exported_at differs between two
// exports of one state, and its sequences may have moved on (an import
// never moves them back; storage/postgres tests them).
func tablesOf(s string) string {
	_, after, _ := strings.Cut(s, `"tables":`)
	tables, _, _ := strings.Cut(after, `"sequences":`)
	return tables
}

var _ state.Resetter = (*stateService)(nil)

// TestDeleteKeysOnRedisCluster: a reset's key deletion reaches the keys of
// every master of a Redis Cluster (SCAN sees one node's keys) and removes
// keys of many slots (one multi-key UNLINK would be refused), leaving
// other keys alone.
func TestDeleteKeysOnRedisCluster(t *testing.T) {
	ctx := context.Background()
	rc := storagetest.RedisCluster(t).Client(t)
	const n = 1200 // more than one SCAN batch per node
	pipe := rc.Pipeline()
	for i := 0; i < n; i++ {
		pipe.Set(ctx, fmt.Sprintf("aviary:rl:rule:app:%d:0", i), 1, time.Hour)
		pipe.Set(ctx, fmt.Sprintf("aviary:keep:%d", i), 1, time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := deleteKeys(ctx, rc, "aviary:rl:*", "aviary:sandbox:rl:*"); err != nil {
		t.Fatalf("deleteKeys: %v", err)
	}
	var left, kept int64
	err := rc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		for pattern, count := range map[string]*int64{"aviary:rl:*": &left, "aviary:keep:*": &kept} {
			iter := node.Scan(ctx, 0, pattern, 1000).Iterator()
			for iter.Next(ctx) {
				atomic.AddInt64(count, 1)
			}
			if err := iter.Err(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil || left != 0 || kept != n {
		t.Fatalf("after deleteKeys: %d rate-limit keys left, %d other keys kept (%v); want 0 and %d", left, kept, err, n)
	}
}
