package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// appColumns are what scanApp reads, from a query that names apps a. Every
// app lookup (authentication's by bearer token and consumer key included)
// goes through them.
const appColumns = `a.id, a.name, a.consumer_key, a.consumer_secret, a.callback_url, a.tier, a.created_at, a.sign_in_enabled`

func scanApp(row pgx.Row) (storage.App, error) {
	var a storage.App
	err := row.Scan(&a.ID, &a.Name, &a.ConsumerKey, &a.ConsumerSecret, &a.CallbackURL, &a.Tier, &a.CreatedAt, &a.SignInEnabled)
	return a, err
}

// CreateApp registers an app with fresh consumer credentials.
func (db *DB) CreateApp(ctx context.Context, name, callbackURL string) (storage.App, error) {
	key, err := ids.Token(25)
	if err != nil {
		return storage.App{}, err
	}
	secret, err := ids.Token(50)
	if err != nil {
		return storage.App{}, err
	}
	app, err := scanApp(db.pool.QueryRow(ctx, `INSERT INTO apps AS a (name, consumer_key, consumer_secret, callback_url)
		VALUES ($1, $2, $3, $4) RETURNING `+appColumns, name, key, secret, callbackURL))
	return app, wrap("create app "+name, err)
}

// AppByName loads an app by its unique name.
func (db *DB) AppByName(ctx context.Context, name string) (storage.App, error) {
	app, err := scanApp(db.pool.QueryRow(ctx, `SELECT `+appColumns+` FROM apps a WHERE a.name = $1`, name))
	return app, wrap("load app "+name, err)
}

// AppByID loads an app by id.
func (db *DB) AppByID(ctx context.Context, id int64) (storage.App, error) {
	app, err := scanApp(db.pool.QueryRow(ctx, `SELECT `+appColumns+` FROM apps a WHERE a.id = $1`, id))
	return app, wrap(fmt.Sprintf("load app %d", id), err)
}

// SetAppTier sets an app's access tier (storage.TierSelfServe or
// storage.TierEnterprise) and returns the app.
func (db *DB) SetAppTier(ctx context.Context, appID int64, tier string) (storage.App, error) {
	op := fmt.Sprintf("set tier of app %d", appID)
	if tier != storage.TierSelfServe && tier != storage.TierEnterprise {
		return storage.App{}, fmt.Errorf("%s: unknown tier %q (want %s or %s)", op, tier, storage.TierSelfServe, storage.TierEnterprise)
	}
	app, err := scanApp(db.pool.QueryRow(ctx, `UPDATE apps a SET tier = $2 WHERE a.id = $1 RETURNING `+appColumns, appID, tier))
	return app, wrap(op, err)
}

// AppByConsumerKey loads the app owning a consumer key.
func (db *DB) AppByConsumerKey(ctx context.Context, key string) (storage.App, error) {
	app, err := scanApp(db.pool.QueryRow(ctx, `SELECT `+appColumns+` FROM apps a WHERE a.consumer_key = $1`, key))
	return app, wrap("load app by consumer key", err)
}

// AppByBearerToken loads the app an unrevoked bearer token belongs to.
func (db *DB) AppByBearerToken(ctx context.Context, token string) (storage.App, error) {
	app, err := scanApp(db.pool.QueryRow(ctx, `SELECT `+appColumns+` FROM apps a
		JOIN bearer_tokens b ON b.app_id = a.id WHERE b.token = $1 AND b.revoked_at IS NULL`, token))
	return app, wrap("load app by bearer token", err)
}

// CreateBearerToken issues a new app-only bearer token.
func (db *DB) CreateBearerToken(ctx context.Context, appID int64) (storage.BearerToken, error) {
	random, err := ids.Token(80)
	if err != nil {
		return storage.BearerToken{}, err
	}
	t := storage.BearerToken{Token: "AAAAAAAAAAAAAAAAAAAAA" + random, AppID: appID}
	err = db.pool.QueryRow(ctx, `INSERT INTO bearer_tokens (token, app_id) VALUES ($1, $2) RETURNING created_at`,
		t.Token, appID).Scan(&t.CreatedAt)
	return t, wrap(fmt.Sprintf("create bearer token for app %d", appID), err)
}

// FirstBearerToken returns the oldest unrevoked bearer token of an app.
func (db *DB) FirstBearerToken(ctx context.Context, appID int64) (storage.BearerToken, error) {
	t := storage.BearerToken{AppID: appID}
	err := db.pool.QueryRow(ctx, `SELECT token, created_at FROM bearer_tokens
		WHERE app_id = $1 AND revoked_at IS NULL ORDER BY created_at, token LIMIT 1`, appID).Scan(&t.Token, &t.CreatedAt)
	return t, wrap(fmt.Sprintf("load bearer token of app %d", appID), err)
}

// RevokeBearerToken revokes a bearer token.
func (db *DB) RevokeBearerToken(ctx context.Context, token string) error {
	return db.revoke(ctx, "bearer_tokens", "revoke bearer token", token)
}

// revoke marks an unrevoked token of table revoked; table is a constant.
func (db *DB) revoke(ctx context.Context, table, op, token string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE `+table+` SET revoked_at = now() WHERE token = $1 AND revoked_at IS NULL`, token)
	if err != nil {
		return wrap(op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", op, storage.ErrNotFound)
	}
	return nil
}

// userColumns are what scanUser reads, from a query that names users u:
// the account and its profile.
const userColumns = userStateColumns + `, u.description, u.location, u.url, u.profile_image_url,
	COALESCE(u.pinned_post_id, 0), u.verified, u.premium, u.country_code`

// userStateColumns are a user's id, names and account states without the
// profile: what compliance reads (PostStatuses), kept narrow for speed.
const userStateColumns = `u.id, u.username, u.name, u.created_at, u.protected_at, u.suspended_at, u.deactivated_at, u.deleted_at`

func scanUser(row pgx.Row) (storage.User, error) {
	var u storage.User
	pr := &u.Profile
	err := row.Scan(&u.ID, &u.Username, &u.Name, &u.CreatedAt, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt,
		&pr.Description, &pr.Location, &pr.URL, &pr.ProfileImageURL, &pr.PinnedPostID, &pr.Verified, &pr.Premium, &pr.CountryCode)
	return u, err
}

// CreateUser registers a user; usernames are unique case-insensitively.
func (db *DB) CreateUser(ctx context.Context, username, name string) (storage.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `INSERT INTO users AS u (username, name) VALUES ($1, $2) RETURNING `+userColumns, username, name))
	return u, wrap("create user "+username, err)
}

// UserByID loads a user, including deleted ones.
func (db *DB) UserByID(ctx context.Context, id int64) (storage.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1`, id))
	return u, wrap(fmt.Sprintf("load user %d", id), err)
}

// UserByUsername loads a user by username (case-insensitive).
func (db *DB) UserByUsername(ctx context.Context, username string) (storage.User, error) {
	u, err := scanUser(db.pool.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE lower(u.username) = lower($1)`, username))
	return u, wrap("load user "+username, err)
}

// UsersByUsernames returns the known users among names, matched
// case-insensitively (the users_username index on lower(username)), in no
// particular order.
func (db *DB) UsersByUsernames(ctx context.Context, names []string) ([]storage.User, error) {
	if len(names) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+userColumns+` FROM users u
		WHERE lower(u.username) = ANY(ARRAY(SELECT lower(n) FROM unnest($1::text[]) n))`, names)
	if err != nil {
		return nil, wrap("query users by username", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.User, error) { return scanUser(row) })
	return out, wrap("scan users by username", err)
}

// userMetricsSQL is UserMetrics' statement ($1: the user ids). The posts
// count is an index-only scan of posts_author_live (0014), whose predicate
// is the count's; the likes count one of the likes primary key; the
// follow counts the partial indexes of 0037 (accepted follows only).
const userMetricsSQL = `SELECT u.id,
		(SELECT count(*) FROM posts p WHERE p.author_id = u.id AND p.deleted_at IS NULL AND p.superseded_at IS NULL),
		(SELECT count(*) FROM likes l WHERE l.user_id = u.id),
		(SELECT count(*) FROM follows f WHERE f.target_id = u.id AND NOT f.pending),
		(SELECT count(*) FROM follows f WHERE f.source_id = u.id AND NOT f.pending)
	FROM users u WHERE u.id = ANY($1)`

// UserMetrics returns the counters of the known users among ids, in one
// query: Posts counts live posts, reposts included, superseded versions of
// edited posts not (the posts_author_live index); Likes counts the user's
// likes rows (the likes primary key); Followers and Following count
// accepted follows (docs/social-graph.md). There is no list model yet:
// Listed is 0.
func (db *DB) UserMetrics(ctx context.Context, ids []int64) (map[int64]storage.UserMetrics, error) {
	return userMetrics(ctx, db.pool, ids)
}

// userMetrics runs userMetricsSQL on q (the pool, or a transaction that
// must see its own changes).
func userMetrics(ctx context.Context, q interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, ids []int64) (map[int64]storage.UserMetrics, error) {
	out := make(map[int64]storage.UserMetrics, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := q.Query(ctx, userMetricsSQL, ids)
	if err != nil {
		return nil, wrap("query user metrics", err)
	}
	var id int64
	var m storage.UserMetrics
	_, err = pgx.ForEachRow(rows, []any{&id, &m.Posts, &m.Likes, &m.Followers, &m.Following}, func() error {
		out[id] = m
		return nil
	})
	if err != nil {
		return nil, wrap("scan user metrics", err)
	}
	return out, nil
}

// ProfileChange is an operator's change of a user's profile: nil fields
// stay as they are. PinnedPostID 0 unpins; another id must be a live post
// of the user's own.
type ProfileChange struct {
	Description, Location, URL, ProfileImageURL, CountryCode *string
	PinnedPostID                                             *int64
}

// SetUserProfile applies change to user id's profile and returns the user;
// like UpdateUserProfile, it appends a profile.update.* event per field
// whose value changed, in the same transaction.
// An unknown user is storage.ErrNotFound; a pinned post that is not one of
// the user's live posts is storage.ErrConflict. CountryCode is stored
// upper-cased and must be two ASCII letters or "".
func (db *DB) SetUserProfile(ctx context.Context, id int64, change ProfileChange) (storage.User, error) {
	op := fmt.Sprintf("set profile of user %d", id)
	if c := change.CountryCode; c != nil {
		upper := strings.ToUpper(*c)
		if !validCountry(upper) {
			return storage.User{}, fmt.Errorf("%s: country code %q: want two letters (ISO 3166-1 alpha-2) or nothing", op, *c)
		}
		change.CountryCode = &upper
	}
	var u storage.User
	err := db.inTx(ctx, op, func(tx pgx.Tx) error {
		if p := change.PinnedPostID; p != nil && *p != 0 {
			var ok bool
			err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM posts WHERE id = $1 AND author_id = $2 AND deleted_at IS NULL)`,
				*p, id).Scan(&ok)
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("pinned post %d is not a live post of the user: %w", *p, storage.ErrConflict)
			}
		}
		before, err := scanUser(tx.QueryRow(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		u, err = scanUser(tx.QueryRow(ctx, `UPDATE users u SET
				description = COALESCE($2, description), location = COALESCE($3, location), url = COALESCE($4, url),
				profile_image_url = COALESCE($5, profile_image_url), country_code = COALESCE($6, country_code),
				pinned_post_id = CASE WHEN $7::bigint IS NULL THEN pinned_post_id ELSE NULLIF($7::bigint, 0) END
			WHERE u.id = $1 RETURNING `+userColumns,
			id, change.Description, change.Location, change.URL, change.ProfileImageURL, change.CountryCode, change.PinnedPostID))
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, profileEvents(before, u)...)
	})
	return u, err
}

func validCountry(c string) bool {
	if c == "" {
		return true
	}
	return len(c) == 2 && 'A' <= c[0] && c[0] <= 'Z' && 'A' <= c[1] && c[1] <= 'Z'
}

// stateUpdates maps an operator state change to the SQL assignment it makes.
var stateUpdates = map[string]string{
	"protected":   `protected_at = COALESCE(protected_at, $2)`,
	"unprotected": `protected_at = NULL`,
	"suspended":   `suspended_at = COALESCE(suspended_at, $2)`,
	"unsuspended": `suspended_at = NULL`,
	"deactivated": `deactivated_at = COALESCE(deactivated_at, $2)`,
	"reactivated": `deactivated_at = NULL`,
	"deleted":     `deleted_at = COALESCE(deleted_at, $2)`,
	"active":      `protected_at = NULL, suspended_at = NULL, deactivated_at = NULL`,
}

// SetUserState applies one of storage.UserStates to a user at time at.
func (db *DB) SetUserState(ctx context.Context, id int64, state string, at time.Time) (storage.User, error) {
	set, ok := stateUpdates[state]
	if !ok {
		return storage.User{}, fmt.Errorf("set user %d state: unknown state %q", id, state)
	}
	u, err := scanUser(db.pool.QueryRow(ctx, `UPDATE users u SET `+set+` WHERE u.id = $1 AND ($2::timestamptz IS NOT NULL) RETURNING `+userColumns, id, at))
	return u, wrap(fmt.Sprintf("set user %d state %s", id, state), err)
}

const tokenColumns = `token, secret, app_id, user_id, access_level, created_at`

func scanToken(row pgx.Row) (storage.AccessToken, error) {
	var t storage.AccessToken
	err := row.Scan(&t.Token, &t.Secret, &t.AppID, &t.UserID, &t.AccessLevel, &t.CreatedAt)
	return t, err
}

// EnsureAccessToken returns the app's unrevoked token for a user, issuing
// one with the given access level if there is none. Concurrent calls return
// the same token: each one only inserts when no row exists and only replaces
// a revoked row, then all load the row that is stored.
func (db *DB) EnsureAccessToken(ctx context.Context, appID, userID int64, level string) (storage.AccessToken, error) {
	t, err := db.liveAccessToken(ctx, appID, userID)
	if !errors.Is(err, storage.ErrNotFound) {
		return t, err
	}
	if err := db.issueAccessToken(ctx, appID, userID, level); err != nil {
		return storage.AccessToken{}, err
	}
	return db.liveAccessToken(ctx, appID, userID)
}

// liveAccessToken loads the app's unrevoked token for a user.
func (db *DB) liveAccessToken(ctx context.Context, appID, userID int64) (storage.AccessToken, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM access_tokens
		WHERE app_id = $1 AND user_id = $2 AND revoked_at IS NULL`, appID, userID))
	return t, wrap(fmt.Sprintf("load access token of user %d for app %d", userID, appID), err)
}

// issueAccessToken stores fresh credentials for (app, user) unless a live
// token is there: it inserts when there is no row and replaces the row when
// it is revoked (one row per app and user). When a concurrent call got there
// first, neither statement changes anything.
func (db *DB) issueAccessToken(ctx context.Context, appID, userID int64, level string) error {
	random, err := ids.Token(30)
	if err != nil {
		return err
	}
	secret, err := ids.Token(45)
	if err != nil {
		return err
	}
	token := ids.Format(userID) + "-" + random
	op := fmt.Sprintf("issue access token for user %d", userID)
	tag, err := db.pool.Exec(ctx, `INSERT INTO access_tokens (token, secret, app_id, user_id, access_level)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (app_id, user_id) DO NOTHING`, token, secret, appID, userID, level)
	if err != nil || tag.RowsAffected() == 1 {
		return wrap(op, err)
	}
	// A row exists. If it is revoked, replace it; the WHERE is rechecked
	// after a concurrent replacement commits, so only one call replaces it.
	_, err = db.pool.Exec(ctx, `UPDATE access_tokens SET token = $1, secret = $2, access_level = $5,
			revoked_at = NULL, created_at = now()
		WHERE app_id = $3 AND user_id = $4 AND revoked_at IS NOT NULL`, token, secret, appID, userID, level)
	return wrap(op, err)
}

// AccessToken loads an unrevoked OAuth 1.0a access token.
func (db *DB) AccessToken(ctx context.Context, token string) (storage.AccessToken, error) {
	t, err := scanToken(db.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM access_tokens WHERE token = $1 AND revoked_at IS NULL`, token))
	return t, wrap("load access token", err)
}

// RevokeAccessToken revokes an OAuth 1.0a access token.
func (db *DB) RevokeAccessToken(ctx context.Context, token string) error {
	return db.revokeAccessToken(ctx, token) // oauth_revoke.go: appends oauth.revoke
}

// EnsureAdAccount returns the user's first ad account, creating one named
// name if the user has none. Concurrent calls for a user are serialized by a
// transaction-scoped advisory lock on the user id (ids are unique across
// tables, so the key cannot meet another record's lock), so only one creates.
func (db *DB) EnsureAdAccount(ctx context.Context, userID int64, name string) (storage.AdAccount, error) {
	var a storage.AdAccount
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, userID); err != nil {
			return fmt.Errorf("lock user %d: %w", userID, err)
		}
		var err error
		a, err = scanAdAccount(tx.QueryRow(ctx, `SELECT `+adAccountColumns+` FROM ad_accounts
			WHERE user_id = $1 AND NOT deleted ORDER BY created_at, id LIMIT 1`, userID))
		if !errors.Is(err, pgx.ErrNoRows) {
			return wrap("load ad account", err)
		}
		a, err = createAdAccount(ctx, tx, userID, name, false)
		return err
	})
	if err != nil {
		return storage.AdAccount{}, err
	}
	return a, nil
}

// createAdAccount inserts an ad account with a new base-36 id. The id comes
// from tx, not the pool: a caller holding the lock must not wait for a
// second connection that the callers queued behind it may be holding.
func createAdAccount(ctx context.Context, tx pgx.Tx, userID int64, name string, sandbox bool) (storage.AdAccount, error) {
	var id int64
	if err := tx.QueryRow(ctx, `SELECT aviary_next_id()`).Scan(&id); err != nil {
		return storage.AdAccount{}, fmt.Errorf("allocate ad account id: %w", err)
	}
	a, err := scanAdAccount(tx.QueryRow(ctx, `INSERT INTO ad_accounts (id, name, user_id, business_id, business_name, sandbox)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+adAccountColumns, ids.Base36(id), name, userID, ids.Base36(id), name+" Business", sandbox))
	if err != nil {
		return a, wrap("create ad account", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO ad_account_users (account_id, user_id) VALUES ($1, $2)`, a.ID, userID)
	return a, wrap("grant ad account owner", err)
}
