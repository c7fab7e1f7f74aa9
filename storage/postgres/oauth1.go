package postgres

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

const requestTokenColumns = `token, secret, app_id, callback, access_level, created_at, expires_at,
	coalesce(user_id, 0), denied_at, used_at, authorized_at IS NOT NULL`

func scanRequestToken(row pgx.Row) (storage.OAuth1RequestToken, error) {
	var t storage.OAuth1RequestToken
	err := row.Scan(&t.Token, &t.Secret, &t.AppID, &t.Callback, &t.AccessLevel, &t.CreatedAt, &t.ExpiresAt,
		&t.UserID, &t.DeniedAt, &t.UsedAt, &t.Authorized)
	return t, err
}

// CreateRequestToken stores a new OAuth 1.0a request token (Token, Secret,
// AppID, Callback, AccessLevel and ExpiresAt are read). It also deletes a
// few tokens that expired over a day ago, so the table does not grow
// without a sweeper.
func (db *DB) CreateRequestToken(ctx context.Context, t storage.OAuth1RequestToken) error {
	op := fmt.Sprintf("create request token of app %d", t.AppID)
	_, err := db.pool.Exec(ctx, `INSERT INTO oauth1_request_tokens (token, secret, app_id, callback, access_level, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, t.Token, t.Secret, t.AppID, t.Callback, t.AccessLevel, t.ExpiresAt)
	if err != nil {
		return wrap(op, err)
	}
	_, err = db.pool.Exec(ctx, `DELETE FROM oauth1_request_tokens WHERE token IN (
		SELECT token FROM oauth1_request_tokens WHERE expires_at < now() - interval '1 day' LIMIT 100)`)
	return wrap(op+": delete expired ones", err)
}

// RequestToken loads a request token whatever its state.
func (db *DB) RequestToken(ctx context.Context, token string) (storage.OAuth1RequestToken, error) {
	t, err := scanRequestToken(db.pool.QueryRow(ctx, `SELECT `+requestTokenColumns+` FROM oauth1_request_tokens WHERE token = $1`, token))
	return t, wrap("load request token", err)
}

// AuthorizeRequestToken records that userID authorized a pending request
// token, with the verifier's hash. ErrNotFound when the token is unknown or
// no longer pending (authorized, denied, used or expired at now).
func (db *DB) AuthorizeRequestToken(ctx context.Context, token string, userID int64, verifierHash []byte, now time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE oauth1_request_tokens SET user_id = $2, verifier_hash = $3, authorized_at = $4
		WHERE token = $1 AND authorized_at IS NULL AND denied_at IS NULL AND used_at IS NULL AND expires_at > $4`,
		token, userID, verifierHash, now)
	return pendingUpdate("authorize request token", tag.RowsAffected(), err)
}

// DenyRequestToken records that the user cancelled a pending request token:
// it can no longer be authorized or exchanged.
func (db *DB) DenyRequestToken(ctx context.Context, token string, now time.Time) error {
	tag, err := db.pool.Exec(ctx, `UPDATE oauth1_request_tokens SET denied_at = $2
		WHERE token = $1 AND authorized_at IS NULL AND denied_at IS NULL AND used_at IS NULL AND expires_at > $2`, token, now)
	return pendingUpdate("deny request token", tag.RowsAffected(), err)
}

func pendingUpdate(op string, rows int64, err error) error {
	if err != nil {
		return wrap(op, err)
	}
	if rows == 0 {
		return fmt.Errorf("%s: %w", op, storage.ErrNotFound)
	}
	return nil
}

// ExchangeRequestToken spends an authorized request token of appID whose
// verifier hashes to verifierHash. The token is spent by any attempt, right
// or wrong verifier alike (single use: a verifier cannot be guessed by
// retrying). It answers ErrVerifier when the token is not authorized, was
// used, has expired at now or the verifier is wrong; ErrNotFound when the
// token is unknown or another app's.
func (db *DB) ExchangeRequestToken(ctx context.Context, token string, appID int64, verifierHash []byte, now time.Time) (storage.OAuth1RequestToken, error) {
	const op = "exchange request token"
	var t storage.OAuth1RequestToken
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		var stored []byte
		row := tx.QueryRow(ctx, `SELECT `+requestTokenColumns+`, verifier_hash FROM oauth1_request_tokens
			WHERE token = $1 AND app_id = $2 FOR UPDATE`, token, appID)
		var err error
		t, err = scanRequestTokenWith(row, &stored)
		if err != nil {
			return err
		}
		if t.UsedAt != nil || !t.Authorized || !now.Before(t.ExpiresAt) {
			return storage.ErrVerifier
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth1_request_tokens SET used_at = $2 WHERE token = $1`, token, now); err != nil {
			return err
		}
		if subtle.ConstantTimeCompare(stored, verifierHash) != 1 {
			return errWrongVerifier
		}
		return nil
	})
	if errors.Is(err, errWrongVerifier) {
		// The token is spent: commit happened inside BeginFunc only on nil,
		// so spend it again outside the rolled-back transaction.
		_, uerr := db.pool.Exec(ctx, `UPDATE oauth1_request_tokens SET used_at = $2 WHERE token = $1 AND used_at IS NULL`, token, now)
		if uerr != nil {
			return t, wrap(op, uerr)
		}
		return t, fmt.Errorf("%s: %w", op, storage.ErrVerifier)
	}
	if errors.Is(err, storage.ErrVerifier) {
		return t, fmt.Errorf("%s: %w", op, err)
	}
	return t, wrap(op, err)
}

var errWrongVerifier = errors.New("wrong verifier")

func scanRequestTokenWith(row pgx.Row, verifierHash *[]byte) (storage.OAuth1RequestToken, error) {
	var t storage.OAuth1RequestToken
	err := row.Scan(&t.Token, &t.Secret, &t.AppID, &t.Callback, &t.AccessLevel, &t.CreatedAt, &t.ExpiresAt,
		&t.UserID, &t.DeniedAt, &t.UsedAt, &t.Authorized, verifierHash)
	return t, err
}

// GrantAccessToken returns the app's live access token for the user with
// access level level: the existing token (its level set to level) or a new
// one. changed reports that an existing token's level changed (credential
// caches must forget it).
func (db *DB) GrantAccessToken(ctx context.Context, appID, userID int64, level string) (t storage.AccessToken, changed bool, err error) {
	t, err = db.EnsureAccessToken(ctx, appID, userID, level)
	if err != nil || t.AccessLevel == level {
		return t, false, err
	}
	_, err = db.pool.Exec(ctx, `UPDATE access_tokens SET access_level = $2 WHERE token = $1 AND revoked_at IS NULL`, t.Token, level)
	if err != nil {
		return t, false, wrap(fmt.Sprintf("set access level of user %d's token", userID), err)
	}
	t.AccessLevel = level
	return t, true, nil
}

// ApprovedAccess is the access level a user approved for an app: that of
// the live access token of (app, user). ErrNotFound when there is none.
func (db *DB) ApprovedAccess(ctx context.Context, appID, userID int64) (string, error) {
	t, err := db.liveAccessToken(ctx, appID, userID)
	return t.AccessLevel, err
}

// SetAppSignIn turns an app's "Sign in with" setting on or off.
func (db *DB) SetAppSignIn(ctx context.Context, appID int64, enabled bool) (storage.App, error) {
	app, err := scanApp(db.pool.QueryRow(ctx, `UPDATE apps a SET sign_in_enabled = $2 WHERE a.id = $1 RETURNING `+appColumns, appID, enabled))
	return app, wrap(fmt.Sprintf("set sign-in of app %d", appID), err)
}
