package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// seedSpecFormat names a seed spec file of AVIARY_SEED_DIR:
// {"format": "aviary-seed", "seed": N} applies `aviary admin seed --seed N`.
const seedSpecFormat = "aviary-seed"

// seedFileHeader is what decides how a seed directory file is applied.
type seedFileHeader struct {
	Format string `json:"format"`
	Seed   *int64 `json:"seed"`
}

// applySeedDir applies the *.json files of dir (none when dir is empty) in
// name order, each once per deployment (the seed_files table remembers
// them, across resets): a state snapshot is imported, a seed spec seeded
// (its photos written to blobs).
// Processes starting together take turns (postgres.WithSeedLock). A file
// that fails stops the start-up: CI wants to know.
func applySeedDir(ctx context.Context, db *postgres.DB, blobs blob.Store, dir string, log *slog.Logger) error {
	if dir == "" {
		return nil
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return fmt.Errorf("AVIARY_SEED_DIR %s: %w", dir, err)
	}
	sort.Strings(names)
	return db.WithSeedLock(ctx, func() error {
		for _, path := range names {
			if err := applySeedFile(ctx, db, blobs, path, log); err != nil {
				return fmt.Errorf("AVIARY_SEED_DIR: %s: %w", path, err)
			}
		}
		return nil
	})
}

func applySeedFile(ctx context.Context, db *postgres.DB, blobs blob.Store, path string, log *slog.Logger) error {
	body, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	digest, name := hex.EncodeToString(sum[:]), filepath.Base(path)
	applied, err := db.SeedFileApplied(ctx, name)
	if err != nil {
		return err
	}
	if applied != "" {
		if applied != digest {
			log.Warn("seed file changed since it was applied; not applied again (reset keeps the record: rename the file to apply it)", "file", name)
		}
		return nil
	}
	var h seedFileHeader
	if err := json.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	switch h.Format {
	case postgres.SnapshotFormat:
		snap, err := postgres.ReadSnapshot(bytes.NewReader(body))
		if err != nil {
			return err
		}
		res, err := applySnapshot(ctx, db, path, snap)
		if err != nil {
			return err
		}
		log.Info("seed file imported", "file", name, "schema_version", res.SchemaVersion, "tables", len(res.Rows))
	case seedSpecFormat:
		if h.Seed == nil {
			return fmt.Errorf(`a seed spec needs "seed": N`)
		}
		res, err := seedState(ctx, db, blobs, *h.Seed)
		if err != nil {
			return err
		}
		log.Info("seed file seeded", "file", name, "seed", res.Seed, "users", len(res.Users), "posts", res.Posts, "media", res.Media)
	default:
		return fmt.Errorf("format %q: want %q (a snapshot of aviary admin export) or %q", h.Format, postgres.SnapshotFormat, seedSpecFormat)
	}
	return db.RecordSeedFile(ctx, name, digest)
}
