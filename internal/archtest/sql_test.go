package archtest

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAPISpeaksNoSQL is the check `make test` runs: no string literal of
// the API tier holds a column or a SQL fragment (the columns are the
// migrations').
func TestAPISpeaksNoSQL(t *testing.T) {
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	schema, err := LoadSchema(filepath.Join(root, "storage", "postgres", "migrations"))
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"campaigns", "line_items", "ad_accounts"} {
		if !slices.Contains(schema[table], "created_at") {
			t.Fatalf("schema of %s lacks created_at: %v", table, schema[table])
		}
	}
	found, err := ScanSQL(root, schema, SQLFree...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Error(f)
	}
}

// TestLoadSchema reads columns from CREATE TABLE (not constraints, not
// what follows a comment's comma) and ALTER TABLE.
func TestLoadSchema(t *testing.T) {
	s, err := LoadSchema(filepath.Join("testdata", "sqlapi", "migrations"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"campaigns": {"id", "name", "budget", "created_at", "updated_at", "deleted"},
		"media":     {"media_key", "key"},
	}
	if len(s) != len(want) {
		t.Fatalf("tables %v, want %v", s, want)
	}
	for table, cols := range want {
		if !slices.Equal(s[table], cols) {
			t.Errorf("%s: columns %v, want %v", table, s[table], cols)
		}
	}
}

// TestSQLIn: columns (qualified by their table or an alias) and SQL
// fragments are SQL; field names, dotted API parameters and prose are not.
func TestSQLIn(t *testing.T) {
	s := Schema{"campaigns": {"id", "name", "created_at"}, "media": {"media_key"}, "ad_accounts": {"name"}}
	sql := []string{"c.created_at", "campaigns.name", "ad_accounts.name", "coalesce(li.name, '')", "SELECT 1",
		"a = 1 WHERE b", "x ORDER BY y", "$1::text", "x::timestamptz", "(pt.deleted OR li.id)", "count JOIN x"}
	notSQL := []string{"created_at", "name", "media.fields", "media.media_ids", "geo.place_id", "tweet.fields",
		"e.g. the name", "i.e. x", "campaigns.fields", "where to", "order by name", "https://ads-api.x.com/12/accounts",
		"reply.in_reply_to_tweet_id", "urn:li:x", "::1", "2001:db8::/32", "fe80::abcd"}
	for _, v := range sql {
		if s.SQLIn(v) == "" {
			t.Errorf("SQLIn(%q) = \"\", want it caught", v)
		}
	}
	for _, v := range notSQL {
		if why := s.SQLIn(v); why != "" {
			t.Errorf("SQLIn(%q) = %q, want none", v, why)
		}
	}
}

// TestScanSQLFindsAColumn: the deliberately wrong tree in
// testdata/sqlapi has one feature literal naming a column; the scan
// reports exactly it, with its line, and not its tests' SQL.
func TestScanSQLFindsAColumn(t *testing.T) {
	root := filepath.Join("testdata", "sqlapi")
	schema, err := LoadSchema(filepath.Join(root, "migrations"))
	if err != nil {
		t.Fatal(err)
	}
	found, err := ScanSQL(root, schema, "api")
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 {
		t.Fatalf("found %v, want the one column", found)
	}
	got := found[0].String()
	want := `api/feature/list.go:7: "c.created_at" holds aliased column c.created_at`
	if !strings.HasPrefix(got, want) {
		t.Errorf("finding %q, want it to start %q", got, want)
	}
}
