package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/state"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/faultsredis"
	"github.com/aviary-dev/aviary/storage/opsredis"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// stateUsage documents the sandbox state commands (docs/state.md).
const stateUsage = `  reset [--surface core|ads|events|all]            remove every record of the surfaces (repeatable; all by default)
                                                   but the bootstrap app, user, ad account and their credentials;
                                                   clears rate-limit and usage counters and faults too
  export --out FILE                                write a versioned JSON snapshot of every record (- : stdout)
  import --in FILE                                 replace every record by a snapshot's (- : stdin); refuses a
                                                   snapshot of a newer Aviary
  seed [--seed N]                                  add a realistic fixture (users, posts, photos, likes, follows, ads),
                                                   the same for the same N
`

// stateVerbs are the one-word state commands.
var stateVerbs = []string{"reset", "export", "import", "seed"}

// demoBootstrap is the identity a reset keeps: bootstrap's.
var demoBootstrap = postgres.Bootstrap{App: demoApp, Username: demoUsername}

// stateFlags are the state commands' flags.
type stateFlags struct {
	Surfaces  surfaceList
	Out, In   string
	Seed      int64
	SeedGiven bool
}

// surfaceList is the repeatable --surface flag (also comma-separated).
type surfaceList []string

func (s *surfaceList) String() string { return strings.Join(*s, ",") }

func (s *surfaceList) Set(v string) error {
	for p := range strings.SplitSeq(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

func (f *stateFlags) bind(fs *flag.FlagSet) {
	fs.Var(&f.Surfaces, "surface", "reset: core, ads, events or all (repeatable)")
	fs.StringVar(&f.Out, "out", "", "export: the snapshot file to write (- for stdout)")
	fs.StringVar(&f.In, "in", "", "import: the snapshot file to read (- for stdin)")
	fs.Int64Var(&f.Seed, "seed", 1, "seed: the fixture's seed")
}

// stateService resets the sandbox: the database (postgres.ResetState), then
// the state outside it (the clearers), then tells every API replica to drop
// its cached credentials. It is state.Resetter for POST /_aviary/state/reset.
type stateService struct {
	db       *postgres.DB
	rdb      redis.UniversalClient // nil: no Redis state to clear
	clearers []state.Clearer
}

// stateClearers is the state outside PostgreSQL a reset clears. This is
// the hook other features wire theirs into: the faults of /_aviary/faults
// ("faults") and the usage counters and credits ("usage") append a
// state.Clearer here, with the surfaces it belongs to.
func stateClearers(rdb redis.UniversalClient) []state.Clearer {
	if rdb == nil {
		return nil
	}
	return []state.Clearer{{Name: "rate-limits", Clear: func(ctx context.Context) error {
		return deleteKeys(ctx, rdb, "aviary:rl:*", "aviary:sandbox:rl:*")
	}}, {Name: "usage-counters", Surfaces: []string{"core"}, Clear: func(ctx context.Context) error {
		// The live counters; app_usage_daily goes with the core surface.
		return deleteKeys(ctx, rdb, "aviary:usage:*")
	}}, {Name: "ops-records", Clear: func(ctx context.Context) error {
		// the console's recent errors and per-minute counts (console_ops.go)
		return opsredis.New(rdb, opsredis.DefaultPrefix).Clear(ctx)
	}}, {Name: "faults", Clear: func(ctx context.Context) error {
		_, err := faultsredis.New(rdb, faultsPrefix).Clear(ctx, 0)
		return err
	}}}
}

// deleteKeys removes the keys matching the patterns: SCAN, then UNLINK.
// On Redis Cluster SCAN sees one node's keys only, so every master is
// scanned; and a batch's keys hash to many slots, so each is unlinked on
// its own (pipelined: one round trip per batch), never one multi-key
// UNLINK, which a cluster refuses (CROSSSLOT).
func deleteKeys(ctx context.Context, rdb redis.UniversalClient, patterns ...string) error {
	if c, ok := rdb.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return deleteKeysOn(ctx, node, patterns)
		})
	}
	return deleteKeysOn(ctx, rdb, patterns)
}

// deleteScanBatch is how many keys a SCAN step asks for and one pipeline
// of UNLINKs removes.
const deleteScanBatch = 500

func deleteKeysOn(ctx context.Context, rdb redis.UniversalClient, patterns []string) error {
	unlink := func(p string, keys []string) error {
		pipe := rdb.Pipeline()
		for _, k := range keys {
			pipe.Unlink(ctx, k)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return fmt.Errorf("remove %s: %w", p, err)
		}
		return nil
	}
	for _, p := range patterns {
		iter := rdb.Scan(ctx, 0, p, deleteScanBatch).Iterator()
		var batch []string
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == deleteScanBatch {
				if err := unlink(p, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := iter.Err(); err != nil {
			return fmt.Errorf("scan %s: %w", p, err)
		}
		if len(batch) > 0 {
			if err := unlink(p, batch); err != nil {
				return err
			}
		}
	}
	return nil
}

// ResetState implements state.Resetter.
func (s *stateService) ResetState(ctx context.Context, surfaces []string) (state.Result, error) {
	surfaces, err := state.Normalize(surfaces)
	if err != nil {
		return state.Result{}, err
	}
	res, err := s.db.ResetState(ctx, demoBootstrap, surfaces)
	if err != nil {
		return state.Result{}, err
	}
	out := state.Result{Surfaces: res.Surfaces, Removed: res.Removed, Cleared: []string{}}
	for _, c := range s.clearers {
		if !c.Applies(surfaces) {
			continue
		}
		if err := c.Clear(ctx); err != nil {
			return out, fmt.Errorf("records reset, but clearing %s failed: %w", c.Name, err)
		}
		out.Cleared = append(out.Cleared, c.Name)
	}
	s.dropCachedCredentials(ctx)
	return out, nil
}

// dropCachedCredentials tells every API replica to empty its credential
// cache (auth.Cache reads "all" as everything): revoked apps and tokens
// must stop working at once.
func (s *stateService) dropCachedCredentials(ctx context.Context) {
	if s.rdb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, announceTimeout)
	defer cancel()
	_ = s.rdb.Publish(ctx, auth.InvalidationChannel, "all").Err() // the caches expire within their TTL anyway
}

// runStateCommand runs reset, export, import or seed.
func runStateCommand(ctx context.Context, cfg *config, db *postgres.DB, verb string, o adminFlags, stdout, stderr io.Writer) (any, error) {
	if len(o.Args) > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see aviary admin help)", o.Args[0])
	}
	switch verb {
	case "reset":
		rdb, closeRedis := adminRedis(ctx, cfg, stderr)
		defer closeRedis()
		svc := &stateService{db: db, rdb: rdb, clearers: stateClearers(rdb)}
		return svc.ResetState(ctx, o.St.Surfaces)
	case "export":
		if err := exportState(ctx, db, o.St.Out, stdout); err != nil || o.St.Out == "-" {
			return nil, err // nil: the snapshot on stdout is the output
		}
		return map[string]string{"file": o.St.Out}, nil
	case "import":
		return importState(ctx, db, o.St.In)
	case "seed":
		blobs, err := adminBlobs(ctx, cfg, stderr)
		if err != nil {
			return nil, err
		}
		return seedState(ctx, db, blobs, o.St.Seed)
	}
	return nil, errors.New("unknown command (see aviary admin help)")
}

// adminBlobs opens the blob store the configuration names, as the API and
// the workers open it (a seed writes its photos there).
func adminBlobs(ctx context.Context, cfg *config, stderr io.Writer) (blob.Store, error) {
	b := &backends{}
	if err := b.openBlobs(ctx, cfg, newLogger(cfg, stderr)); err != nil {
		return nil, err
	}
	return b.blobs, nil
}

// adminRedis connects to Redis for a reset; unreachable, it warns and the
// reset clears the database only.
func adminRedis(ctx context.Context, cfg *config, stderr io.Writer) (redis.UniversalClient, func()) {
	rc, err := redisClient(cfg)
	if err == nil {
		if err = rc.Ping(ctx).Err(); err == nil {
			return rc, func() { _ = rc.Close() }
		}
		_ = rc.Close()
	}
	fmt.Fprintf(stderr, "warning: Redis unreachable (%v): rate-limit counters are not cleared\n", err)
	return nil, func() {}
}

func exportState(ctx context.Context, db *postgres.DB, path string, stdout io.Writer) error {
	if path == "" {
		return errors.New("--out is required (- for stdout)")
	}
	if path == "-" {
		return db.ExportState(ctx, stdout)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	if err := db.ExportState(ctx, f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	return os.Rename(tmp, path)
}

// importResult is what import prints.
type importResult struct {
	File          string         `json:"file"`
	FormatVersion int            `json:"format_version"`
	SchemaVersion int            `json:"schema_version"`
	Rows          map[string]int `json:"rows"`
}

func importState(ctx context.Context, db *postgres.DB, path string) (importResult, error) {
	if path == "" {
		return importResult{}, errors.New("--in is required (- for stdin)")
	}
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return importResult{}, fmt.Errorf("open %s: %w", path, err)
		}
		defer f.Close()
		r = f
	}
	snap, err := postgres.ReadSnapshot(r)
	if err != nil {
		return importResult{}, fmt.Errorf("%s: %w", path, err)
	}
	return applySnapshot(ctx, db, path, snap)
}

func applySnapshot(ctx context.Context, db *postgres.DB, path string, snap postgres.Snapshot) (importResult, error) {
	if err := db.ImportState(ctx, snap); err != nil {
		return importResult{}, fmt.Errorf("%s: %w", path, err)
	}
	out := importResult{File: path, FormatVersion: snap.FormatVersion, SchemaVersion: snap.SchemaVersion, Rows: map[string]int{}}
	for _, t := range snap.Tables {
		if len(t.Rows) > 0 {
			out.Rows[t.Name] = len(t.Rows)
		}
	}
	return out, nil
}

// isStateVerb reports whether verb is a one-word state command.
func isStateVerb(verb string) bool { return slices.Contains(stateVerbs, verb) }
