package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// pairGrantLive is liveGrant for the (app $1, user $2) pair: a live OAuth
// 1.0a access token or a live OAuth 2.0 grant (docs/activity.md,
// "Private subscriptions and revocation").
const pairGrantLive = `SELECT EXISTS (SELECT 1 FROM access_tokens k
		WHERE k.app_id = $1 AND k.user_id = $2 AND k.revoked_at IS NULL)
	OR EXISTS (SELECT 1 FROM oauth2_families f JOIN oauth2_tokens t ON t.family_id = f.id
		WHERE f.app_id = $1 AND f.user_id = $2 AND f.revoked_at IS NULL
		  AND t.revoked_at IS NULL AND t.used_at IS NULL AND t.expires_at > now())`

// revokeGrant runs revoke, a revocation of a credential of user for app,
// in tx, and appends oauth.revoke when it ended the pair's last live grant
// (live before it, none after). The pair's advisory lock, held to the
// commit, serializes revocations of one pair, so two concurrent ones
// append the event once. It must end tx (appendEvents).
func revokeGrant(ctx context.Context, tx pgx.Tx, app, user int64, now time.Time, revoke func() error) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('oauth.revoke:' || $1::bigint || ':' || $2::bigint, 0))`,
		app, user); err != nil {
		return fmt.Errorf("lock the grant of user %d to app %d: %w", user, app, err)
	}
	var before, after bool
	if err := tx.QueryRow(ctx, pairGrantLive, app, user).Scan(&before); err != nil {
		return fmt.Errorf("check the grant of user %d to app %d: %w", user, app, err)
	}
	if err := revoke(); err != nil {
		return err
	}
	if !before {
		return nil
	}
	if err := tx.QueryRow(ctx, pairGrantLive, app, user).Scan(&after); err != nil {
		return fmt.Errorf("check the grant of user %d to app %d: %w", user, app, err)
	}
	if after {
		return nil
	}
	return appendEvents(ctx, tx, newEvent{typ: events.OAuthRevoke, app: app, user: user, subject: user,
		payload: events.OAuthRevoked{UserID: user, AppID: app, At: now.UTC()}})
}

// revokeAccessToken revokes an unrevoked OAuth 1.0a access token
// (RevokeAccessToken) and appends oauth.revoke when that ends the user's
// grant to the token's app; an unknown or revoked token is
// storage.ErrNotFound.
func (db *DB) revokeAccessToken(ctx context.Context, token string) error {
	return db.inTx(ctx, "revoke access token", func(tx pgx.Tx) error {
		var app, user int64
		err := tx.QueryRow(ctx, `SELECT app_id, user_id FROM access_tokens WHERE token = $1 AND revoked_at IS NULL`, token).Scan(&app, &user)
		if err != nil {
			return err
		}
		return revokeGrant(ctx, tx, app, user, time.Now(), func() error {
			tag, err := tx.Exec(ctx, `UPDATE access_tokens SET revoked_at = now() WHERE token = $1 AND revoked_at IS NULL`, token)
			if err == nil && tag.RowsAffected() == 0 {
				err = storage.ErrNotFound // revoked meanwhile
			}
			return err
		})
	})
}
