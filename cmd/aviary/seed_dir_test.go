package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/storagetest"
)

func TestApplySeedDir(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, _ := storagetest.NewDB(t)
	other, _ := storagetest.NewDB(t)
	fromOther, err := seedState(ctx, other, testBlobs(t), 9)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	snapshot, err := os.Create(filepath.Join(dir, "20-snapshot.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.ExportState(ctx, snapshot); err != nil {
		t.Fatal(err)
	}
	snapshot.Close()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("10-seed.json", `{"format":"aviary-seed","seed":5}`)
	write("30-seed.json", `{"format":"aviary-seed","seed":6}`)
	write("notes.txt", "ignored: not *.json")

	for round := range 2 { // the second start-up applies nothing again
		if err := applySeedDir(ctx, db, testBlobs(t), dir, log); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	// 10 seeded 5, 20 replaced everything by the other deployment's
	// state, 30 seeded 6 on top.
	if _, err := db.UserByUsername(ctx, fromOther.Users[0]); err != nil {
		t.Errorf("user %s of the imported snapshot: %v", fromOther.Users[0], err)
	}
	if _, err := db.AppByName(ctx, "aviary-seed-5"); err == nil {
		t.Error("seed 5's app survived the snapshot import that followed it")
	}
	if _, err := db.AppByName(ctx, "aviary-seed-6"); err != nil {
		t.Errorf("seed 6's app: %v", err)
	}
	for _, name := range []string{"10-seed.json", "20-snapshot.json", "30-seed.json"} {
		if sum, err := db.SeedFileApplied(ctx, name); err != nil || len(sum) != 64 {
			t.Errorf("seed file %s recorded as %q, %v", name, sum, err)
		}
	}

	write("40-bad.json", `{"format":"nope"}`)
	if err := applySeedDir(ctx, db, testBlobs(t), dir, log); err == nil || !strings.Contains(err.Error(), "40-bad.json") {
		t.Errorf("a bad seed file: %v, want an error naming it", err)
	}
}
