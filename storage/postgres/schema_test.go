package postgres_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestStatusCheckMatchesStorage keeps each status column's CHECK constraint
// and the typed status list in package storage one definition: a status
// added on one side only fails here.
func TestStatusCheckMatchesStorage(t *testing.T) {
	t.Parallel()
	_, url := storagetest.NewDB(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tests := []struct {
		table, column string
		want          []string
	}{
		{"compliance_jobs", "status", storage.JobStatusNames()},
		{"compliance_jobs", "type", storage.ComplianceTypes},
		{"media", "state", mediaStateNames()},
		{"media", "kind", []string{storage.MediaPhoto, storage.MediaVideo, storage.MediaAnimatedGIF, storage.MediaSubtitle}},
		{"custom_audience_batches", "state", storage.BatchStateNames()},
		{"do_not_reach_batches", "state", storage.BatchStateNames()},
	}
	for _, tc := range tests {
		var def string
		err := conn.QueryRow(t.Context(), `SELECT pg_get_constraintdef(c.oid) FROM pg_constraint c
			JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = ANY(c.conkey)
			WHERE c.conrelid = $1::regclass AND c.contype = 'c' AND a.attname = $2`, tc.table, tc.column).Scan(&def)
		if err != nil {
			t.Fatalf("CHECK of %s.%s: %v", tc.table, tc.column, err)
		}
		got := quoted(def)
		if !slices.Equal(sorted(got), sorted(tc.want)) {
			t.Errorf("%s.%s CHECK allows %v, storage defines %v (constraint %s)", tc.table, tc.column, got, tc.want, def)
		}
	}
}

var quotedRE = regexp.MustCompile(`'([^']*)'`)

// quoted lists the string literals of a constraint definition.
func quoted(def string) []string {
	var out []string
	for _, m := range quotedRE.FindAllStringSubmatch(def, -1) {
		out = append(out, m[1])
	}
	return out
}

func sorted(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

func mediaStateNames() []string {
	var out []string
	for _, s := range storage.MediaStates {
		out = append(out, string(s))
	}
	return out
}
