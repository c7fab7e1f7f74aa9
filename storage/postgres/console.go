package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// The developer console's reads and writes (docs/console.md). Everything
// else it does goes through the functions `aviary admin` and the API use.

// TokenRefOf is the console's reference of a token (storage.TokenRef).
func TokenRefOf(token string) storage.TokenRef {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:8])
}

// maskToken shows a token's first 4 and last 4 characters.
func maskToken(token string) string {
	if len(token) <= 12 {
		return "…"
	}
	return token[:4] + "…" + token[len(token)-4:]
}

// ConsoleApps lists apps, newest first: those owned by ownerID, or every
// app when all is set (an administrator).
func (db *DB) ConsoleApps(ctx context.Context, ownerID int64, all bool) ([]storage.ConsoleApp, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+appColumns+`, COALESCE(a.owner_id, 0), COALESCE(u.username, '')
		FROM apps a LEFT JOIN users u ON u.id = a.owner_id
		WHERE $2 OR a.owner_id = $1 ORDER BY a.created_at DESC, a.id DESC LIMIT 500`, ownerID, all)
	if err != nil {
		return nil, wrap("list console apps", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ConsoleApp, error) {
		var c storage.ConsoleApp
		a := &c.App
		err := row.Scan(&a.ID, &a.Name, &a.ConsumerKey, &a.ConsumerSecret, &a.CallbackURL, &a.Tier, &a.CreatedAt, &a.SignInEnabled,
			&c.OwnerID, &c.OwnerUsername)
		return c, err
	})
	return out, wrap("list console apps", err)
}

// AppOwner is the owner of an app (0: none).
func (db *DB) AppOwner(ctx context.Context, appID int64) (int64, error) {
	var owner int64
	err := db.pool.QueryRow(ctx, `SELECT COALESCE(owner_id, 0) FROM apps WHERE id = $1`, appID).Scan(&owner)
	return owner, wrap(fmt.Sprintf("load owner of app %d", appID), err)
}

// SetAppOwner makes userID the owner of app appID (0: no owner).
func (db *DB) SetAppOwner(ctx context.Context, appID, userID int64) error {
	tag, err := db.pool.Exec(ctx, `UPDATE apps SET owner_id = NULLIF($2::bigint, 0) WHERE id = $1`, appID, userID)
	if err != nil {
		return wrap(fmt.Sprintf("set owner of app %d", appID), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set owner of app %d: %w", appID, storage.ErrNotFound)
	}
	return nil
}

// IsUserAdmin reports whether a user is a console administrator.
func (db *DB) IsUserAdmin(ctx context.Context, userID int64) (bool, error) {
	var admin bool
	err := db.pool.QueryRow(ctx, `SELECT is_admin FROM users WHERE id = $1`, userID).Scan(&admin)
	return admin, wrap(fmt.Sprintf("load admin flag of user %d", userID), err)
}

// SetUserAdmin sets a user's console administrator flag.
func (db *DB) SetUserAdmin(ctx context.Context, userID int64, on bool) error {
	tag, err := db.pool.Exec(ctx, `UPDATE users SET is_admin = $2 WHERE id = $1`, userID, on)
	if err != nil {
		return wrap(fmt.Sprintf("set admin flag of user %d", userID), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set admin flag of user %d: %w", userID, storage.ErrNotFound)
	}
	return nil
}

// ConsoleUsers lists users, newest first, at most limit.
func (db *DB) ConsoleUsers(ctx context.Context, limit int) ([]storage.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+userColumns+` FROM users u ORDER BY u.created_at DESC, u.id DESC LIMIT $1`, limit)
	if err != nil {
		return nil, wrap("list console users", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.User, error) { return scanUser(row) })
	return out, wrap("list console users", err)
}

// AppBearerTokens lists an app's unrevoked bearer tokens, oldest first.
func (db *DB) AppBearerTokens(ctx context.Context, appID int64) ([]storage.ConsoleToken, error) {
	rows, err := db.pool.Query(ctx, `SELECT token, created_at FROM bearer_tokens
		WHERE app_id = $1 AND revoked_at IS NULL ORDER BY created_at, token`, appID)
	if err != nil {
		return nil, wrap("list bearer tokens", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ConsoleToken, error) {
		var token string
		var c storage.ConsoleToken
		err := row.Scan(&token, &c.CreatedAt)
		c.Ref, c.Masked = TokenRefOf(token), maskToken(token)
		return c, err
	})
	return out, wrap("list bearer tokens", err)
}

// AppAccessTokens lists an app's unrevoked OAuth 1.0a access tokens.
func (db *DB) AppAccessTokens(ctx context.Context, appID int64) ([]storage.ConsoleToken, error) {
	rows, err := db.pool.Query(ctx, `SELECT k.token, k.user_id, u.username, k.access_level, k.created_at
		FROM access_tokens k JOIN users u ON u.id = k.user_id
		WHERE k.app_id = $1 AND k.revoked_at IS NULL ORDER BY k.created_at, k.token`, appID)
	if err != nil {
		return nil, wrap("list access tokens", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ConsoleToken, error) {
		var token string
		var c storage.ConsoleToken
		err := row.Scan(&token, &c.UserID, &c.Username, &c.AccessLevel, &c.CreatedAt)
		c.Ref, c.Masked = TokenRefOf(token), maskToken(token)
		return c, err
	})
	return out, wrap("list access tokens", err)
}

// AppTokenByRef finds the app's unrevoked bearer (table bearer_tokens) or
// access token (access_tokens) whose reference is ref.
func (db *DB) AppTokenByRef(ctx context.Context, appID int64, bearer bool, ref storage.TokenRef) (string, error) {
	table := "access_tokens"
	if bearer {
		table = "bearer_tokens"
	}
	rows, err := db.pool.Query(ctx, `SELECT token FROM `+table+` WHERE app_id = $1 AND revoked_at IS NULL`, appID)
	if err != nil {
		return "", wrap("find token", err)
	}
	tokens, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", wrap("find token", err)
	}
	for _, t := range tokens {
		if TokenRefOf(t) == ref {
			return t, nil
		}
	}
	return "", fmt.Errorf("find token: %w", storage.ErrNotFound)
}

// AppOAuth2Grants lists an app's live OAuth 2.0 grants (families not
// revoked with a token still usable), newest first.
func (db *DB) AppOAuth2Grants(ctx context.Context, appID int64) ([]storage.ConsoleGrant, error) {
	rows, err := db.pool.Query(ctx, `SELECT f.id, f.user_id, u.username, f.scopes, f.created_at
		FROM oauth2_families f JOIN users u ON u.id = f.user_id
		WHERE f.app_id = $1 AND f.revoked_at IS NULL AND EXISTS (SELECT 1 FROM oauth2_tokens t WHERE t.family_id = f.id
			AND t.revoked_at IS NULL AND t.used_at IS NULL AND t.expires_at > now())
		ORDER BY f.created_at DESC, f.id DESC`, appID)
	if err != nil {
		return nil, wrap("list OAuth 2.0 grants", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.ConsoleGrant, error) {
		var g storage.ConsoleGrant
		err := row.Scan(&g.ID, &g.UserID, &g.Username, &g.Scopes, &g.CreatedAt)
		return g, err
	})
	return out, wrap("list OAuth 2.0 grants", err)
}

// RevokeOAuth2Grant revokes the app's grant familyID and every token of it,
// appending oauth.revoke when that ends the user's last grant to the app
// (as RevokeOAuth2Token does). storage.ErrNotFound: no live grant.
func (db *DB) RevokeOAuth2Grant(ctx context.Context, appID, familyID int64, now time.Time) error {
	return db.inTx(ctx, "revoke OAuth 2.0 grant", func(tx pgx.Tx) error {
		var user int64
		err := tx.QueryRow(ctx, `SELECT user_id FROM oauth2_families WHERE id = $1 AND app_id = $2 AND revoked_at IS NULL`,
			familyID, appID).Scan(&user)
		if errors.Is(err, pgx.ErrNoRows) {
			return storage.ErrNotFound
		}
		if err != nil {
			return err
		}
		return revokeGrant(ctx, tx, appID, user, now, func() error {
			_, err := tx.Exec(ctx, `UPDATE oauth2_families SET revoked_at = $2 WHERE id = $1`, familyID, now)
			return err
		})
	})
}

// ConsoleComplianceJobs lists the compliance jobs of apps, newest first
// (with the worker's progress counts), at most limit.
func (db *DB) ConsoleComplianceJobs(ctx context.Context, apps []int64, limit int) ([]storage.ComplianceJob, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+jobColumns+` FROM compliance_jobs WHERE app_id = ANY($1)
		ORDER BY id DESC LIMIT $2`, apps, limit)
	if err != nil {
		return nil, wrap("list console compliance jobs", err)
	}
	out, err := collectJobs(rows)
	return out, wrap("list console compliance jobs", err)
}
