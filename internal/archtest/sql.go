package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// SQLFree are the directories (relative to the module root) whose Go code
// speaks no SQL: the API tier names fields, storage/postgres maps them to
// columns (docs/architecture.md). ScanSQL walks them recursively, skipping
// tests and testdata.
var SQLFree = []string{"api"}

// Schema is what the migrations define: each table's columns.
type Schema map[string][]string

// hasColumn reports whether any table has column col.
func (s Schema) hasColumn(col string) bool {
	for _, cols := range s {
		if slices.Contains(cols, col) {
			return true
		}
	}
	return false
}

var (
	createTable = regexp.MustCompile(`(?i)CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)\s*\(`)
	alterTable  = regexp.MustCompile(`(?is)ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?([a-z_][a-z0-9_]*)([^;]*)`)
	addColumn   = regexp.MustCompile(`(?i)(?:ADD\s+COLUMN\s+(?:IF\s+NOT\s+EXISTS\s+)?|RENAME\s+COLUMN\s+[a-z_][a-z0-9_]*\s+TO\s+)([a-z_][a-z0-9_]*)`)
	lineComment = regexp.MustCompile(`--[^\n]*`)
	firstWord   = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)`)
)

// notColumns are the words that start a table constraint, not a column.
var notColumns = []string{"constraint", "primary", "unique", "check", "foreign", "exclude", "like"}

// LoadSchema reads the tables and columns the migrations in dir create
// (CREATE TABLE, ALTER TABLE ... ADD COLUMN / RENAME COLUMN ... TO).
func LoadSchema(dir string) (Schema, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("archtest: no migrations in %s (%v)", dir, err)
	}
	s := Schema{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("archtest: %w", err)
		}
		s.add(lineComment.ReplaceAllString(string(b), ""))
	}
	return s, nil
}

// add records the tables and columns one migration's text defines.
func (s Schema) add(sql string) {
	for _, m := range createTable.FindAllStringSubmatchIndex(sql, -1) {
		table := strings.ToLower(sql[m[2]:m[3]])
		for _, def := range tableElements(sql[m[1]:]) {
			w := firstWord.FindStringSubmatch(def)
			if w != nil && !slices.Contains(notColumns, strings.ToLower(w[1])) {
				s[table] = append(s[table], strings.ToLower(w[1]))
			}
		}
		if s[table] == nil {
			s[table] = []string{}
		}
	}
	for _, m := range alterTable.FindAllStringSubmatch(sql, -1) {
		table := strings.ToLower(m[1])
		for _, c := range addColumn.FindAllStringSubmatch(m[2], -1) {
			s[table] = append(s[table], strings.ToLower(c[1]))
		}
	}
}

// tableElements splits the body of a CREATE TABLE (the text after its
// opening parenthesis) at its top-level commas, up to the closing one.
func tableElements(body string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range body {
		switch c {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return append(out, body[start:i])
			}
			depth--
		case ',':
			if depth == 0 {
				out = append(out, body[start:i])
				start = i + 1
			}
		}
	}
	return out
}

var (
	// sqlWords are SQL fragments no API string holds: keywords and casts
	// (an IPv6 address's "::" is no cast).
	sqlWords = regexp.MustCompile(`\b(SELECT|WHERE|ORDER BY|GROUP BY|INSERT INTO|DELETE FROM|JOIN)\b|` +
		`::(text|int|integer|bigint|smallint|numeric|boolean|timestamptz|timestamp|date|interval|jsonb|json|uuid|bytea|regclass)\b`)
	// qualified is a qualified name: table or alias, dot, column.
	qualified = regexp.MustCompile(`\b([a-z_][a-z0-9_]*)\.([a-z_][a-z0-9_]*)\b`)
)

// SQLIn returns why the string value v is SQL, or "" when it is not: a SQL
// keyword or cast, a table's own column qualified by the table
// ("ad_accounts.name"), or a known column qualified by a one- or
// two-letter alias ("c.created_at"). A dotted API name such as
// "media.fields" or "geo.place_id" is no column of a table of that name.
func (s Schema) SQLIn(v string) string {
	if m := sqlWords.FindString(v); m != "" {
		return fmt.Sprintf("SQL %q", m)
	}
	for _, m := range qualified.FindAllStringSubmatch(v, -1) {
		qual, col := m[1], m[2]
		if cols, ok := s[qual]; ok && slices.Contains(cols, col) {
			return "column " + m[0]
		}
		if len(qual) <= 2 && s.hasColumn(col) {
			return "aliased column " + m[0]
		}
	}
	return ""
}

// SQLFinding is one string literal of SQL-free code that holds SQL.
type SQLFinding struct {
	Pos     string // file:line, relative to the scanned root
	Literal string
	Why     string
}

func (f SQLFinding) String() string {
	return fmt.Sprintf("%s: %s holds %s: name a field and map it in storage/postgres (docs/architecture.md)", f.Pos, f.Literal, f.Why)
}

// ScanSQL returns the string literals of the non-test Go files below each
// of dirs (relative to root; testdata skipped) in which schema sees SQL.
func ScanSQL(root string, schema Schema, dirs ...string) ([]SQLFinding, error) {
	var out []SQLFinding
	fset := token.NewFileSet()
	for _, dir := range dirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "testdata":
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			found, err := scanFile(fset, root, path, schema)
			out = append(out, found...)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("archtest: scan %s: %w", dir, err)
		}
	}
	return out, nil
}

// scanFile checks the string literals of one Go file.
func scanFile(fset *token.FileSet, root, path string, schema Schema) ([]SQLFinding, error) {
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	rel, _ := filepath.Rel(root, path)
	var out []SQLFinding
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		v, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if why := schema.SQLIn(v); why != "" {
			pos := fmt.Sprintf("%s:%d", filepath.ToSlash(rel), fset.Position(lit.Pos()).Line)
			out = append(out, SQLFinding{Pos: pos, Literal: lit.Value, Why: why})
		}
		return true
	})
	return out, nil
}
