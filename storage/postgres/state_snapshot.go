package postgres

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// SnapshotFormat names Aviary's state snapshots; SnapshotVersion is the
// version of their layout this build writes and the newest it reads.
const (
	SnapshotFormat  = "aviary-state"
	SnapshotVersion = 1
)

// Snapshot is a JSON state snapshot (docs/state.md): every exported table's
// rows as PostgreSQL's to_jsonb renders them (ids, timestamps with their
// microseconds and blob keys verbatim) and every sequence's position.
type Snapshot struct {
	Format        string          `json:"format"`
	FormatVersion int             `json:"format_version"`
	SchemaVersion int             `json:"schema_version"`
	ExportedAt    time.Time       `json:"exported_at"`
	Tables        []SnapshotTable `json:"tables"`
	Sequences     []SnapshotSeq   `json:"sequences"`
}

// SnapshotTable is one table of a snapshot, in dependency order.
type SnapshotTable struct {
	Name    string            `json:"name"`
	Columns []string          `json:"columns"`
	Rows    []json.RawMessage `json:"rows"`
}

// SnapshotSeq is a sequence's position: LastValue nil for a sequence never
// used.
type SnapshotSeq struct {
	Name      string `json:"name"`
	LastValue *int64 `json:"last_value"`
}

// SchemaVersion is the newest migration applied to the database.
func (db *DB) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM schema_migrations`).Scan(&v)
	return v, wrap("read schema version", err)
}

// ExportState writes a snapshot of every exported table to w, read in one
// repeatable-read transaction so that it is consistent.
func (db *DB) ExportState(ctx context.Context, w io.Writer) error {
	tx, err := db.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return wrap("export state: begin", err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := exportState(ctx, tx, w); err != nil {
		return fmt.Errorf("export state: %w", err)
	}
	return nil
}

func exportState(ctx context.Context, tx pgx.Tx, w io.Writer) error {
	order, err := schemaTables(ctx, tx)
	if err != nil {
		return err
	}
	var schema int
	if err := tx.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM schema_migrations`).Scan(&schema); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	s := Snapshot{Format: SnapshotFormat, FormatVersion: SnapshotVersion, SchemaVersion: schema, ExportedAt: time.Now().UTC()}
	for _, t := range order {
		if !exported(t) {
			continue
		}
		table, err := exportTable(ctx, tx, t)
		if err != nil {
			return err
		}
		s.Tables = append(s.Tables, table)
	}
	if s.Sequences, err = exportSequences(ctx, tx); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("write snapshot: %w", err)
	}
	return bw.Flush()
}

func exported(table string) bool {
	c := stateTables[table].class
	return c == classData || c == classIdentity || c == classConfig
}

// insertableColumns are table's columns a snapshot carries: all but the
// generated ones, in column order.
func insertableColumns(ctx context.Context, tx pgx.Tx, table string) ([]string, error) {
	rows, err := tx.Query(ctx, `SELECT column_name::text FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND is_generated = 'NEVER'
		ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("columns of %s: %w", table, err)
	}
	return cols, nil
}

func exportTable(ctx context.Context, tx pgx.Tx, table string) (SnapshotTable, error) {
	cols, err := insertableColumns(ctx, tx, table)
	if err != nil {
		return SnapshotTable{}, err
	}
	// Ordered by the whole row, so that two exports of one state are
	// byte-identical.
	sql := `SELECT to_jsonb(t)::text FROM ` + pgx.Identifier{table}.Sanitize() + ` t ORDER BY t::text`
	rows, err := tx.Query(ctx, sql)
	if err != nil {
		return SnapshotTable{}, fmt.Errorf("read %s: %w", table, err)
	}
	out := SnapshotTable{Name: table, Columns: cols, Rows: []json.RawMessage{}}
	var row string
	if _, err := pgx.ForEachRow(rows, []any{&row}, func() error {
		out.Rows = append(out.Rows, json.RawMessage(row))
		return nil
	}); err != nil {
		return SnapshotTable{}, fmt.Errorf("read %s: %w", table, err)
	}
	return out, nil
}

func exportSequences(ctx context.Context, tx pgx.Tx) ([]SnapshotSeq, error) {
	rows, err := tx.Query(ctx, `SELECT sequencename::text, last_value FROM pg_sequences
		WHERE schemaname = current_schema() ORDER BY 1`)
	if err != nil {
		return nil, fmt.Errorf("read sequences: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SnapshotSeq, error) {
		var s SnapshotSeq
		err := r.Scan(&s.Name, &s.LastValue)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("read sequences: %w", err)
	}
	return out, nil
}

// ReadSnapshot decodes a snapshot and checks that this build can import
// it: its format, a layout version and a schema version no newer than this
// build's.
func ReadSnapshot(r io.Reader) (Snapshot, error) {
	var s Snapshot
	dec := json.NewDecoder(bufio.NewReader(r))
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("read snapshot: %w", err)
	}
	if s.Format != SnapshotFormat {
		return s, fmt.Errorf("read snapshot: format %q is not an Aviary state snapshot (want %q)", s.Format, SnapshotFormat)
	}
	if s.FormatVersion > SnapshotVersion || s.FormatVersion < 1 {
		return s, fmt.Errorf("read snapshot: snapshot format version %d is not supported by this Aviary (it reads versions 1 to %d); import it with the Aviary that wrote it or a newer one",
			s.FormatVersion, SnapshotVersion)
	}
	migrations, err := Migrations()
	if err != nil {
		return s, err
	}
	if latest := migrations[len(migrations)-1].Version; s.SchemaVersion > latest {
		return s, fmt.Errorf("read snapshot: it was written by a newer Aviary (schema version %d, this one knows up to %d); upgrade Aviary to import it",
			s.SchemaVersion, latest)
	}
	return s, nil
}

// ImportState replaces the deployment's state by the snapshot's in one
// transaction: the exported tables are emptied (the bootstrap identity
// included: the snapshot's own takes its place), the snapshot's rows
// inserted as they were and the sequences set where they stood (or left
// where they are, when that is further: a sequence never goes back). The
// database's schema must be at least the snapshot's (ReadSnapshot checks).
func (db *DB) ImportState(ctx context.Context, s Snapshot) error {
	return db.inTx(ctx, "import state", func(tx pgx.Tx) error {
		var schema int
		if err := tx.QueryRow(ctx, `SELECT COALESCE(max(version), 0) FROM schema_migrations`).Scan(&schema); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if s.SchemaVersion > schema {
			return fmt.Errorf("the snapshot's schema version %d is newer than the database's %d; run aviary migrate first", s.SchemaVersion, schema)
		}
		order, err := schemaTables(ctx, tx)
		if err != nil {
			return err
		}
		triggered, err := setUserTriggers(ctx, tx, nil, false)
		if err != nil {
			return err
		}
		for _, t := range slices.Backward(order) {
			if exported(t) {
				if _, err := tx.Exec(ctx, `DELETE FROM `+pgx.Identifier{t}.Sanitize()); err != nil {
					return fmt.Errorf("empty %s: %w", t, err)
				}
			}
		}
		byName := map[string]SnapshotTable{}
		for _, t := range s.Tables {
			byName[t.Name] = t
		}
		for _, t := range order {
			st, ok := byName[t]
			if !ok || !exported(t) || len(st.Rows) == 0 {
				continue
			}
			if err := importTable(ctx, tx, st); err != nil {
				return err
			}
		}
		for name := range byName {
			if _, ok := stateTables[name]; !ok {
				return fmt.Errorf("the snapshot has table %s, which this Aviary does not know", name)
			}
		}
		if err := importSequences(ctx, tx, s.Sequences); err != nil {
			return err
		}
		if _, err := setUserTriggers(ctx, tx, triggered, true); err != nil {
			return err
		}
		return afterStateChange(ctx, tx)
	})
}

// importTable inserts a snapshot table's rows in one statement (foreign
// keys between its own rows are checked at its end), the columns the
// snapshot and the table share; others take their defaults.
func importTable(ctx context.Context, tx pgx.Tx, st SnapshotTable) error {
	current, err := insertableColumns(ctx, tx, st.Name)
	if err != nil {
		return err
	}
	var cols []string
	for _, c := range st.Columns {
		if slices.Contains(current, c) {
			cols = append(cols, pgx.Identifier{c}.Sanitize())
		}
	}
	if len(cols) == 0 {
		return nil
	}
	list := strings.Join(cols, ", ")
	ident := pgx.Identifier{st.Name}.Sanitize()
	rows, err := json.Marshal(st.Rows)
	if err != nil {
		return fmt.Errorf("encode rows of %s: %w", st.Name, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO `+ident+` (`+list+`) OVERRIDING SYSTEM VALUE
		SELECT `+list+` FROM jsonb_populate_recordset(NULL::`+ident+`, $1::jsonb)`, string(rows))
	if err != nil {
		return fmt.Errorf("import %d rows of %s: %w", len(st.Rows), st.Name, err)
	}
	return nil
}

func importSequences(ctx context.Context, tx pgx.Tx, seqs []SnapshotSeq) error {
	for _, s := range seqs {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_sequences WHERE schemaname = current_schema() AND sequencename = $1)`,
			s.Name).Scan(&exists); err != nil {
			return fmt.Errorf("find sequence %s: %w", s.Name, err)
		}
		if !exists {
			return fmt.Errorf("the snapshot has sequence %s, which this Aviary does not know", s.Name)
		}
		if s.LastValue == nil {
			continue // never used there: whatever it is here, it is not behind
		}
		// Never backwards: a running consumer of the event log remembers
		// the last seq it read, and ids handed out before stay unique.
		_, err := tx.Exec(ctx, `SELECT setval($1::regclass, GREATEST($2::bigint, COALESCE((SELECT last_value FROM pg_sequences
			WHERE schemaname = current_schema() AND sequencename = $3), $2::bigint)), true)`, pgx.Identifier{s.Name}.Sanitize(), *s.LastValue, s.Name)
		if err != nil {
			return fmt.Errorf("set sequence %s: %w", s.Name, err)
		}
	}
	return nil
}

// setUserTriggers disables (enable false) the user triggers of every
// exported table that has some, and returns those tables; with enable it
// enables them again on tables. An import writes the snapshot's rows as
// they are: the triggers would derive rows (insight changes) the snapshot
// already holds. ALTER TABLE is transactional: a failed import leaves them
// enabled.
func setUserTriggers(ctx context.Context, tx pgx.Tx, tables []string, enable bool) ([]string, error) {
	if !enable {
		rows, err := tx.Query(ctx, `SELECT DISTINCT c.relname::text FROM pg_trigger g JOIN pg_class c ON c.oid = g.tgrelid
			WHERE NOT g.tgisinternal AND c.relnamespace = current_schema()::regnamespace ORDER BY 1`)
		if err != nil {
			return nil, fmt.Errorf("list triggers: %w", err)
		}
		all, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, fmt.Errorf("list triggers: %w", err)
		}
		for _, t := range all {
			if exported(t) {
				tables = append(tables, t)
			}
		}
	}
	verb := "DISABLE"
	if enable {
		verb = "ENABLE"
	}
	for _, t := range tables {
		if _, err := tx.Exec(ctx, `ALTER TABLE `+pgx.Identifier{t}.Sanitize()+` `+verb+` TRIGGER USER`); err != nil {
			return nil, fmt.Errorf("%s triggers of %s: %w", strings.ToLower(verb), t, err)
		}
	}
	return tables, nil
}
