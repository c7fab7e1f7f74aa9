package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Surfaces a state reset can be limited to (docs/state.md).
const (
	SurfaceCore   = "core"
	SurfaceAds    = "ads"
	SurfaceEvents = "events"
	SurfaceAll    = "all"
)

// Surfaces are the surfaces of a reset, SurfaceAll excluded.
var Surfaces = []string{SurfaceCore, SurfaceAds, SurfaceEvents}

// tableClass says what a reset and a snapshot do with a table.
type tableClass int

const (
	// classData: every row is removed by a reset of its surface and
	// exported.
	classData tableClass = iota
	// classIdentity: like classData, except the bootstrap identity's rows
	// (keep) survive a reset.
	classIdentity
	// classConfig: operator configuration a reset keeps; exported.
	classConfig
	// classInternal: kept by a reset and not exported: the schema's own
	// bookkeeping, deployment secrets, reference data the migrations seed,
	// coordination leases.
	classInternal
)

// tableRule is one table's place in a reset and a snapshot.
type tableRule struct {
	surface string
	class   tableClass
	// keep is the SQL predicate of the bootstrap rows of a classIdentity
	// table; it reads the temporary table state_keep (app, usr, acct).
	keep string
}

const (
	keepApp  = `app_id = (SELECT app FROM state_keep)`
	keepUser = `user_id = (SELECT usr FROM state_keep)`
	keepAcct = `account_id = (SELECT acct FROM state_keep)`
)

// stateTables classifies every table of the schema. A table missing here
// makes Reset, Export and Import fail (and TestStateTablesClassified), so a
// new migration cannot be forgotten.
var stateTables = map[string]tableRule{
	// Identity: the bootstrap app, user and ad account survive.
	"apps":                {SurfaceCore, classIdentity, `id = (SELECT app FROM state_keep)`},
	"bearer_tokens":       {SurfaceCore, classIdentity, keepApp},
	"app_callback_urls":   {SurfaceCore, classIdentity, keepApp},
	"oauth2_clients":      {SurfaceCore, classIdentity, keepApp},
	"users":               {SurfaceCore, classIdentity, `id = (SELECT usr FROM state_keep)`},
	"access_tokens":       {SurfaceCore, classIdentity, keepApp + ` AND ` + keepUser},
	"ad_accounts":         {SurfaceAds, classIdentity, `id = (SELECT acct FROM state_keep)`},
	"ad_account_features": {SurfaceAds, classIdentity, keepAcct},
	"ad_account_users":    {SurfaceAds, classIdentity, keepAcct + ` AND ` + keepUser},
	"funding_instruments": {SurfaceAds, classIdentity, keepAcct},
	// The bootstrap app's usage caps and credits are its settings: kept.
	"app_usage_settings": {SurfaceCore, classIdentity, keepApp},

	// Core records.
	"oauth1_request_tokens":   {SurfaceCore, classData, ""},
	"oauth2_codes":            {SurfaceCore, classData, ""},
	"oauth2_families":         {SurfaceCore, classData, ""},
	"oauth2_tokens":           {SurfaceCore, classData, ""},
	"posts":                   {SurfaceCore, classData, ""},
	"likes":                   {SurfaceCore, classData, ""},
	"follows":                 {SurfaceCore, classData, ""},
	"blocks":                  {SurfaceCore, classData, ""},
	"mutes":                   {SurfaceCore, classData, ""},
	"media":                   {SurfaceCore, classData, ""},
	"media_segments":          {SurfaceCore, classData, ""},
	"compliance_jobs":         {SurfaceCore, classData, ""},
	"dm_conversations":        {SurfaceCore, classData, ""},
	"dm_events":               {SurfaceCore, classData, ""},
	"dm_participants":         {SurfaceCore, classData, ""},
	"chat_members":            {SurfaceCore, classData, ""},
	"chat_messages":           {SurfaceCore, classData, ""},
	"broadcasts":              {SurfaceCore, classData, ""},
	"broadcast_chat_messages": {SurfaceCore, classData, ""},
	"spaces":                  {SurfaceCore, classData, ""},
	"news_stories":            {SurfaceCore, classData, ""},
	"insight_changes":         {SurfaceCore, classData, ""},
	"insight_term_days":       {SurfaceCore, classData, ""},
	"insight_term_hours":      {SurfaceCore, classData, ""},
	"insight_term_pairs":      {SurfaceCore, classData, ""},
	"app_usage_daily":         {SurfaceCore, classData, ""},

	// Ads records.
	"account_apps":                 {SurfaceAds, classData, ""},
	"account_history":              {SurfaceAds, classData, ""},
	"account_media":                {SurfaceAds, classData, ""},
	"ads_cards":                    {SurfaceAds, classData, ""},
	"ads_posts":                    {SurfaceAds, classData, ""},
	"campaigns":                    {SurfaceAds, classData, ""},
	"line_items":                   {SurfaceAds, classData, ""},
	"line_item_curated_categories": {SurfaceAds, classData, ""},
	"targeting_criteria":           {SurfaceAds, classData, ""},
	"promoted_tweets":              {SurfaceAds, classData, ""},
	"media_creatives":              {SurfaceAds, classData, ""},
	"media_library":                {SurfaceAds, classData, ""},
	"custom_audiences":             {SurfaceAds, classData, ""},
	"custom_audience_batches":      {SurfaceAds, classData, ""},
	"custom_audience_members":      {SurfaceAds, classData, ""},
	"custom_audience_permissions":  {SurfaceAds, classData, ""},
	"do_not_reach_lists":           {SurfaceAds, classData, ""},
	"do_not_reach_batches":         {SurfaceAds, classData, ""},
	"do_not_reach_entries":         {SurfaceAds, classData, ""},
	"product_catalogs":             {SurfaceAds, classData, ""},
	"products":                     {SurfaceAds, classData, ""},
	"insight_queries":              {SurfaceAds, classData, ""},

	// Events: the log and what reads it.
	"events":                    {SurfaceEvents, classData, ""},
	"event_cursors":             {SurfaceEvents, classData, ""},
	"webhooks":                  {SurfaceEvents, classData, ""},
	"webhook_deliveries":        {SurfaceEvents, classData, ""},
	"webhook_delivery_attempts": {SurfaceEvents, classData, ""},
	"webhook_replay_jobs":       {SurfaceEvents, classData, ""},
	"webhook_stream_links":      {SurfaceEvents, classData, ""},
	"activity_subscriptions":    {SurfaceEvents, classData, ""},
	"stream_rules":              {SurfaceEvents, classData, ""},
	"stream_connections":        {SurfaceEvents, classData, ""},

	// Kept.
	"places":                         {SurfaceCore, classConfig, ""},
	"schema_migrations":              {SurfaceCore, classInternal, ""},
	"task_leases":                    {SurfaceCore, classInternal, ""},
	"url_signing_keys":               {SurfaceCore, classInternal, ""},
	"web_secrets":                    {SurfaceCore, classInternal, ""},
	"advertiser_business_categories": {SurfaceAds, classInternal, ""},
	"curated_categories":             {SurfaceAds, classInternal, ""},
	"stream_rules_version":           {SurfaceEvents, classInternal, ""},
	"seed_files":                     {SurfaceCore, classInternal, ""},
}

// Bootstrap names the identity a reset keeps: the app by name, the user by
// username, and the user's first live ad account (the one
// `aviary admin bootstrap` ensures). Missing ones are simply not kept.
type Bootstrap struct {
	App, Username string
}

// ResetResult reports a reset: the surfaces reset and the rows removed per
// table (tables that lost none are left out).
type ResetResult struct {
	Surfaces []string         `json:"surfaces"`
	Removed  map[string]int64 `json:"removed"`
}

// StateTables lists the base tables of the schema, sorted.
func (db *DB) StateTables(ctx context.Context) ([]string, error) {
	return listTables(ctx, db.pool)
}

func listTables(ctx context.Context, q querier) ([]string, error) {
	rows, err := q.Query(ctx, `SELECT table_name::text FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`)
	if err != nil {
		return nil, wrap("list tables", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return names, wrap("list tables", err)
}

// UnclassifiedTables are the schema's tables no reset or snapshot rule
// names; anything here is a defect (a new migration's table).
func UnclassifiedTables(tables []string) []string {
	var out []string
	for _, t := range tables {
		if _, ok := stateTables[t]; !ok {
			out = append(out, t)
		}
	}
	return out
}

// NormalizeSurfaces checks names and expands SurfaceAll (or nothing) to
// every surface.
func NormalizeSurfaces(names []string) ([]string, error) {
	if len(names) == 0 || slices.Contains(names, SurfaceAll) {
		return slices.Clone(Surfaces), nil
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(Surfaces, n) {
			return nil, fmt.Errorf("unknown surface %q: want %s or %s", n, strings.Join(Surfaces, ", "), SurfaceAll)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out, nil
}

// schemaTables lists the tables in dependency order (a table after those
// it references) and checks that each is classified.
func schemaTables(ctx context.Context, tx pgx.Tx) ([]string, error) {
	tables, err := listTables(ctx, tx)
	if err != nil {
		return nil, err
	}
	if bad := UnclassifiedTables(tables); len(bad) > 0 {
		return nil, fmt.Errorf("tables %s are not classified for reset and snapshots (storage/postgres/state.go)", strings.Join(bad, ", "))
	}
	rows, err := tx.Query(ctx, `SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint
		WHERE contype = 'f' AND connamespace = current_schema()::regnamespace`)
	if err != nil {
		return nil, wrap("list foreign keys", err)
	}
	deps := map[string][]string{}
	var from, to string
	if _, err := pgx.ForEachRow(rows, []any{&from, &to}, func() error {
		if from != to {
			deps[from] = append(deps[from], to)
		}
		return nil
	}); err != nil {
		return nil, wrap("list foreign keys", err)
	}
	return dependencyOrder(tables, deps)
}

// dependencyOrder sorts tables so that each follows the tables it
// references (deps); ties keep name order.
func dependencyOrder(tables []string, deps map[string][]string) ([]string, error) {
	state := map[string]int{} // 1 visiting, 2 done
	var out []string
	var visit func(t string) error
	visit = func(t string) error {
		switch state[t] {
		case 1:
			return fmt.Errorf("foreign keys form a cycle through %s", t)
		case 2:
			return nil
		}
		state[t] = 1
		ds := slices.Clone(deps[t])
		sort.Strings(ds)
		for _, d := range ds {
			if err := visit(d); err != nil {
				return err
			}
		}
		state[t] = 2
		out = append(out, t)
		return nil
	}
	for _, t := range tables {
		if err := visit(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ResetState removes the records of the given surfaces (nil: all) in one
// transaction, except the bootstrap identity's rows and the kept tables
// (docs/state.md). Rows of other surfaces that reference removed ones go
// with them (the schema's ON DELETE CASCADE).
func (db *DB) ResetState(ctx context.Context, keep Bootstrap, surfaces []string) (ResetResult, error) {
	surfaces, err := NormalizeSurfaces(surfaces)
	if err != nil {
		return ResetResult{}, err
	}
	res := ResetResult{Surfaces: surfaces, Removed: map[string]int64{}}
	err = db.inTx(ctx, "reset state", func(tx pgx.Tx) error {
		order, err := schemaTables(ctx, tx)
		if err != nil {
			return err
		}
		if err := markKeep(ctx, tx, keep); err != nil {
			return err
		}
		// Two passes: the first one's triggers append derived rows
		// (insight changes of removed posts) that the second removes.
		for pass := range 2 {
			for _, t := range slices.Backward(order) {
				n, err := resetTable(ctx, tx, t, surfaces)
				if err != nil {
					return err
				}
				if n > 0 && pass == 0 {
					res.Removed[t] += n
				}
			}
		}
		return afterStateChange(ctx, tx)
	})
	return res, err
}

// resetTable removes table's rows if its surface is among surfaces.
func resetTable(ctx context.Context, tx pgx.Tx, table string, surfaces []string) (int64, error) {
	rule := stateTables[table]
	if !slices.Contains(surfaces, rule.surface) {
		return 0, nil
	}
	var sql string
	switch rule.class {
	case classData:
		sql = `DELETE FROM ` + pgx.Identifier{table}.Sanitize()
	case classIdentity:
		sql = `DELETE FROM ` + pgx.Identifier{table}.Sanitize() + ` WHERE NOT COALESCE((` + rule.keep + `), false)`
	default:
		return 0, nil
	}
	tag, err := tx.Exec(ctx, sql)
	if err != nil {
		return 0, fmt.Errorf("reset %s: %w", table, err)
	}
	return tag.RowsAffected(), nil
}

// markKeep fills the transaction's temporary table state_keep with the
// bootstrap identity's ids (NULL for missing ones).
func markKeep(ctx context.Context, tx pgx.Tx, keep Bootstrap) error {
	_, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE state_keep (app bigint, usr bigint, acct text) ON COMMIT DROP`)
	if err != nil {
		return fmt.Errorf("create state_keep: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO state_keep (app, usr, acct)
		SELECT (SELECT id FROM apps WHERE name = $1), u.id,
			(SELECT a.id FROM ad_accounts a WHERE a.user_id = u.id AND NOT a.deleted ORDER BY a.created_at, a.id LIMIT 1)
		FROM (SELECT (SELECT id FROM users WHERE lower(username) = lower($2)) AS id) u`, keep.App, keep.Username)
	if err != nil {
		return fmt.Errorf("find the bootstrap identity: %w", err)
	}
	return nil
}

// afterStateChange repairs what a reset or an import leaves behind: a kept
// user's pin of a removed post, and the stream rules version, bumped so
// every stream replica reloads its rules.
func afterStateChange(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `UPDATE users u SET pinned_post_id = NULL
		WHERE pinned_post_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = u.pinned_post_id)`); err != nil {
		return fmt.Errorf("unpin removed posts: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE stream_rules_version SET version = version + 1`); err != nil {
		return fmt.Errorf("bump stream rules version: %w", err)
	}
	return nil
}

// BackdatePost moves a post's creation time (and its conversation's, for
// the post that starts it): the seed fixture spreads its posts over the
// past week. The insight triggers follow the change.
func (db *DB) BackdatePost(ctx context.Context, id int64, at time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE posts SET created_at = $2,
		chain_created_at = CASE WHEN edit_root_id = id THEN $2 ELSE chain_created_at END WHERE id = $1`, id, at)
	if err != nil {
		return wrap(fmt.Sprintf("backdate post %d", id), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("backdate post %d: %w", id, storage.ErrNotFound)
	}
	return nil
}

// seedLockID is the advisory lock key that serializes the start-up seed
// directory between processes.
const seedLockID = 7301190045

// WithSeedLock runs f holding the seed directory's lock (a session lock on
// a connection of its own), so that of several processes starting at once
// one applies the files and the others then find them applied.
func (db *DB) WithSeedLock(ctx context.Context, f func() error) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return wrap("acquire connection for the seed lock", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1)`, seedLockID); err != nil {
		return wrap("take the seed lock", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, seedLockID) //nolint:errcheck
	return f()
}

// SeedFileApplied returns the digest recorded for a seed file ("" when it
// was never applied).
func (db *DB) SeedFileApplied(ctx context.Context, name string) (string, error) {
	var sum string
	err := db.pool.QueryRow(ctx, `SELECT sha256 FROM seed_files WHERE name = $1`, name).Scan(&sum)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return sum, wrap("read seed file "+name, err)
}

// RecordSeedFile records that a seed file was applied.
func (db *DB) RecordSeedFile(ctx context.Context, name, sha256 string) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO seed_files (name, sha256) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET sha256 = EXCLUDED.sha256, applied_at = now()`, name, sha256)
	return wrap("record seed file "+name, err)
}
