package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// HashSecret is how OAuth 2.0 codes, tokens and client secrets are stored
// (domain/oauth2.HashSecret: their SHA-256).
func HashSecret(s string) []byte { return oauth2.HashSecret(s) }

// SetUserPassword stores a user's password hash (a PHC string; "" disables
// password login).
func (db *DB) SetUserPassword(ctx context.Context, userID int64, hash string) error {
	tag, err := db.pool.Exec(ctx, `UPDATE users SET password_hash = $2 WHERE id = $1`, userID, hash)
	if err != nil {
		return wrap(fmt.Sprintf("set password of user %d", userID), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("set password of user %d: %w", userID, storage.ErrNotFound)
	}
	return nil
}

// UserPassword loads a user by username (case-insensitive) with the stored
// password hash ("" when none is set).
func (db *DB) UserPassword(ctx context.Context, username string) (storage.User, string, error) {
	var hash string
	row := db.pool.QueryRow(ctx, `SELECT `+userColumns+`, u.password_hash FROM users u WHERE lower(u.username) = lower($1)`, username)
	var u storage.User
	pr := &u.Profile
	err := row.Scan(&u.ID, &u.Username, &u.Name, &u.CreatedAt, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt,
		&pr.Description, &pr.Location, &pr.URL, &pr.ProfileImageURL, &pr.PinnedPostID, &pr.Verified, &pr.Premium, &pr.CountryCode, &hash)
	return u, hash, wrap("load login of "+username, err)
}

// AddCallbackURL registers a callback URL for an app (idempotent).
func (db *DB) AddCallbackURL(ctx context.Context, appID int64, url string) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO app_callback_urls (app_id, url) VALUES ($1, $2) ON CONFLICT DO NOTHING`, appID, url)
	return wrap(fmt.Sprintf("add callback URL of app %d", appID), err)
}

// RemoveCallbackURL removes a registered callback URL (ErrNotFound if it
// was not registered).
func (db *DB) RemoveCallbackURL(ctx context.Context, appID int64, url string) error {
	tag, err := db.pool.Exec(ctx, `DELETE FROM app_callback_urls WHERE app_id = $1 AND url = $2`, appID, url)
	if err != nil {
		return wrap(fmt.Sprintf("remove callback URL of app %d", appID), err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("remove callback URL of app %d: %w", appID, storage.ErrNotFound)
	}
	return nil
}

// CallbackURLs lists an app's registered callback URLs in registration order.
func (db *DB) CallbackURLs(ctx context.Context, appID int64) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT url FROM app_callback_urls WHERE app_id = $1 ORDER BY created_at, url`, appID)
	if err != nil {
		return nil, wrap("list callback URLs", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, wrap("list callback URLs", err)
}

// HasCallbackURL reports whether url is registered for the app (exact match).
func (db *DB) HasCallbackURL(ctx context.Context, appID int64, url string) (bool, error) {
	var ok bool
	err := db.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM app_callback_urls WHERE app_id = $1 AND url = $2)`, appID, url).Scan(&ok)
	return ok, wrap("check callback URL", err)
}

const clientColumns = `c.app_id, c.client_id, c.client_type, c.secret_hash, c.created_at`

func scanClient(row pgx.Row) (storage.OAuth2Client, error) {
	var c storage.OAuth2Client
	err := row.Scan(&c.AppID, &c.ClientID, &c.Type, &c.SecretHash, &c.CreatedAt)
	return c, err
}

// newClientSecret returns a fresh secret and its hash for clientType (none
// for a public client).
func newClientSecret(clientType string) (string, []byte, error) {
	switch clientType {
	case storage.ClientPublic:
		return "", nil, nil
	case storage.ClientConfidential:
		secret, err := ids.Token(50)
		if err != nil {
			return "", nil, err
		}
		return secret, HashSecret(secret), nil
	}
	return "", nil, fmt.Errorf("unknown OAuth 2.0 client type %q (want %s or %s)", clientType, storage.ClientConfidential, storage.ClientPublic)
}

// EnsureOAuth2Client returns the app's OAuth 2.0 client, registering a
// confidential one if it has none. secret is the new client secret when this
// call created it, "" otherwise (only its hash is kept).
func (db *DB) EnsureOAuth2Client(ctx context.Context, appID int64) (c storage.OAuth2Client, secret string, err error) {
	op := fmt.Sprintf("ensure OAuth 2.0 client of app %d", appID)
	clientID, err := ids.Token(34)
	if err != nil {
		return c, "", err
	}
	secret, hash, err := newClientSecret(storage.ClientConfidential)
	if err != nil {
		return c, "", err
	}
	c, err = scanClient(db.pool.QueryRow(ctx, `INSERT INTO oauth2_clients AS c (app_id, client_id, client_type, secret_hash)
		VALUES ($1, $2, 'confidential', $3) ON CONFLICT (app_id) DO NOTHING RETURNING `+clientColumns, appID, clientID, hash))
	if err == nil {
		return c, secret, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return c, "", wrap(op, err)
	}
	c, err = scanClient(db.pool.QueryRow(ctx, `SELECT `+clientColumns+` FROM oauth2_clients c WHERE c.app_id = $1`, appID))
	return c, "", wrap(op, err)
}

// SetOAuth2Client sets the app's client type and issues a new secret (for
// a confidential client; a public one has none), registering the client
// if needed. The old secret stops working at once.
func (db *DB) SetOAuth2Client(ctx context.Context, appID int64, clientType string) (storage.OAuth2Client, string, error) {
	op := fmt.Sprintf("rotate OAuth 2.0 client of app %d", appID)
	if _, _, err := db.EnsureOAuth2Client(ctx, appID); err != nil {
		return storage.OAuth2Client{}, "", err
	}
	secret, hash, err := newClientSecret(clientType)
	if err != nil {
		return storage.OAuth2Client{}, "", fmt.Errorf("%s: %w", op, err)
	}
	c, err := scanClient(db.pool.QueryRow(ctx, `UPDATE oauth2_clients c SET client_type = $2, secret_hash = $3, rotated_at = now()
		WHERE c.app_id = $1 RETURNING `+clientColumns, appID, clientType, hash))
	return c, secret, wrap(op, err)
}

// OAuth2ClientByID loads a client and its app by client_id.
func (db *DB) OAuth2ClientByID(ctx context.Context, clientID string) (storage.OAuth2Client, storage.App, error) {
	var c storage.OAuth2Client
	var a storage.App
	err := db.pool.QueryRow(ctx, `SELECT `+clientColumns+`, `+appColumns+` FROM oauth2_clients c JOIN apps a ON a.id = c.app_id
		WHERE c.client_id = $1`, clientID).Scan(&c.AppID, &c.ClientID, &c.Type, &c.SecretHash, &c.CreatedAt,
		&a.ID, &a.Name, &a.ConsumerKey, &a.ConsumerSecret, &a.CallbackURL, &a.Tier, &a.CreatedAt, &a.SignInEnabled)
	return c, a, wrap("load OAuth 2.0 client", err)
}

// CreateOAuth2Code stores an authorization code (hashed).
func (db *DB) CreateOAuth2Code(ctx context.Context, code string, c storage.OAuth2Code) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO oauth2_codes (code_hash, app_id, user_id, redirect_uri, scopes, code_challenge, challenge_method, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, HashSecret(code), c.AppID, c.UserID, c.RedirectURI, c.Scopes, c.Challenge, c.Method, c.ExpiresAt)
	return wrap("create authorization code", err)
}

// ExchangeOAuth2Code redeems an authorization code in one transaction:
// check (the caller's PKCE, client and redirect_uri checks) sees the code
// and returns the tokens to issue; the code is marked used, a grant family
// is created and the tokens stored. An unknown or expired code is
// ErrNotFound; a code used before is ErrTokenReused, and the family its
// first exchange created is revoked.
func (db *DB) ExchangeOAuth2Code(ctx context.Context, code string, now time.Time, check func(storage.OAuth2Code) (storage.OAuth2Issued, error)) (storage.OAuth2Code, error) {
	var c storage.OAuth2Code
	var reused bool
	err := db.inTx(ctx, "exchange authorization code", func(tx pgx.Tx) error {
		var family *int64
		err := tx.QueryRow(ctx, `SELECT app_id, user_id, redirect_uri, scopes, code_challenge, challenge_method, expires_at, used_at, created_at, family_id
			FROM oauth2_codes WHERE code_hash = $1 FOR UPDATE`, HashSecret(code)).
			Scan(&c.AppID, &c.UserID, &c.RedirectURI, &c.Scopes, &c.Challenge, &c.Method, &c.ExpiresAt, &c.UsedAt, &c.CreatedAt, &family)
		if err != nil {
			return err
		}
		if c.UsedAt != nil {
			reused = true
			if family != nil {
				_, err = tx.Exec(ctx, `UPDATE oauth2_families SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL`, *family, now)
			}
			return err
		}
		if !now.Before(c.ExpiresAt) {
			return storage.ErrNotFound
		}
		issued, err := check(c)
		if err != nil {
			return err
		}
		var familyID int64
		if err := tx.QueryRow(ctx, `INSERT INTO oauth2_families (app_id, user_id, scopes) VALUES ($1, $2, $3) RETURNING id`,
			c.AppID, c.UserID, issued.Scopes).Scan(&familyID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth2_codes SET used_at = $2, family_id = $3 WHERE code_hash = $1`, HashSecret(code), now, familyID); err != nil {
			return err
		}
		return insertTokens(ctx, tx, familyID, issued)
	})
	if err != nil {
		return c, err
	}
	if reused {
		return c, storage.ErrTokenReused
	}
	return c, nil
}

func insertTokens(ctx context.Context, tx pgx.Tx, familyID int64, issued storage.OAuth2Issued) error {
	if _, err := tx.Exec(ctx, `INSERT INTO oauth2_tokens (token_hash, kind, family_id, scopes, expires_at) VALUES ($1, 'access', $2, $3, $4)`,
		HashSecret(issued.Access), familyID, issued.Scopes, issued.AccessExpires); err != nil {
		return err
	}
	if issued.Refresh == "" {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO oauth2_tokens (token_hash, kind, family_id, scopes, expires_at) VALUES ($1, 'refresh', $2, $3, $4)`,
		HashSecret(issued.Refresh), familyID, issued.Scopes, issued.RefreshExpires)
	return err
}

const oauth2TokenColumns = `t.kind, t.family_id, f.app_id, f.user_id, t.scopes, t.created_at, t.expires_at, t.used_at,
	(t.revoked_at IS NOT NULL OR f.revoked_at IS NOT NULL)`

func scanOAuth2Token(row pgx.Row) (storage.OAuth2Token, error) {
	var t storage.OAuth2Token
	err := row.Scan(&t.Kind, &t.FamilyID, &t.AppID, &t.UserID, &t.Scopes, &t.CreatedAt, &t.ExpiresAt, &t.UsedAt, &t.Revoked)
	return t, err
}

// OAuth2Token loads an OAuth 2.0 user token by its raw value, revoked,
// expired and used ones included (see storage.OAuth2Token.Live).
func (db *DB) OAuth2Token(ctx context.Context, token string) (storage.OAuth2Token, error) {
	t, err := scanOAuth2Token(db.pool.QueryRow(ctx, `SELECT `+oauth2TokenColumns+`
		FROM oauth2_tokens t JOIN oauth2_families f ON f.id = t.family_id WHERE t.token_hash = $1`, HashSecret(token)))
	return t, wrap("load OAuth 2.0 token", err)
}

// RefreshOAuth2 rotates a refresh token in one transaction: check sees the
// live refresh token (the caller's client and scope checks) and returns the
// tokens to issue in its family; the old refresh token is marked used. An
// unknown, revoked or expired refresh token (or one of another app) is
// ErrNotFound; one rotated before is ErrTokenReused and its whole family is
// revoked.
func (db *DB) RefreshOAuth2(ctx context.Context, refresh string, appID int64, now time.Time, check func(storage.OAuth2Token) (storage.OAuth2Issued, error)) (storage.OAuth2Token, error) {
	var t storage.OAuth2Token
	var reused bool
	err := db.inTx(ctx, "refresh OAuth 2.0 token", func(tx pgx.Tx) error {
		var err error
		t, err = scanOAuth2Token(tx.QueryRow(ctx, `SELECT `+oauth2TokenColumns+`
			FROM oauth2_tokens t JOIN oauth2_families f ON f.id = t.family_id
			WHERE t.token_hash = $1 AND t.kind = 'refresh' FOR UPDATE OF t, f`, HashSecret(refresh)))
		if err != nil {
			return err
		}
		if t.AppID != appID || t.Revoked || !now.Before(t.ExpiresAt) {
			return storage.ErrNotFound
		}
		if t.UsedAt != nil {
			reused = true
			_, err = tx.Exec(ctx, `UPDATE oauth2_families SET revoked_at = $2 WHERE id = $1`, t.FamilyID, now)
			return err
		}
		issued, err := check(t)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth2_tokens SET used_at = $2 WHERE token_hash = $1`, HashSecret(refresh), now); err != nil {
			return err
		}
		return insertTokens(ctx, tx, t.FamilyID, issued)
	})
	if err != nil {
		return t, err
	}
	if reused {
		return t, storage.ErrTokenReused
	}
	return t, nil
}

// RevokeOAuth2Token revokes a token of the app: an access token alone, a
// refresh token with its whole family (RFC 7009 section 2.1). An unknown
// token, or one of another app, is ErrNotFound.
func (db *DB) RevokeOAuth2Token(ctx context.Context, token string, appID int64, now time.Time) (storage.OAuth2Token, error) {
	var t storage.OAuth2Token
	err := db.inTx(ctx, "revoke OAuth 2.0 token", func(tx pgx.Tx) error {
		var err error
		t, err = scanOAuth2Token(tx.QueryRow(ctx, `SELECT `+oauth2TokenColumns+`
			FROM oauth2_tokens t JOIN oauth2_families f ON f.id = t.family_id WHERE t.token_hash = $1`, HashSecret(token)))
		if err != nil {
			return err
		}
		if t.AppID != appID {
			return storage.ErrNotFound
		}
		return revokeGrant(ctx, tx, t.AppID, t.UserID, now, func() error { // appends oauth.revoke if the grant ended
			if t.Kind == storage.TokenRefresh {
				_, err := tx.Exec(ctx, `UPDATE oauth2_families SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1`, t.FamilyID, now)
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE oauth2_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE token_hash = $1`, HashSecret(token), now)
			return err
		})
	})
	return t, err
}

// WebSecret returns the named secret shared by every replica, storing
// generate's value the first time (concurrent first calls agree on one).
func (db *DB) WebSecret(ctx context.Context, name string, generate func() ([]byte, error)) ([]byte, error) {
	fresh, err := generate()
	if err != nil {
		return nil, err
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO web_secrets (name, secret) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, fresh); err != nil {
		return nil, wrap("store web secret "+name, err)
	}
	var secret []byte
	err = db.pool.QueryRow(ctx, `SELECT secret FROM web_secrets WHERE name = $1`, name).Scan(&secret)
	return secret, wrap("load web secret "+name, err)
}

// SetOAuth2ClientSecret makes secret the app's confidential client secret
// (registering the client if needed), unless it already is; it reports
// whether it changed anything. bootstrap uses it to keep the demo app's
// derived secret in place.
func (db *DB) SetOAuth2ClientSecret(ctx context.Context, appID int64, secret string) (storage.OAuth2Client, bool, error) {
	op := fmt.Sprintf("set OAuth 2.0 client secret of app %d", appID)
	if _, _, err := db.EnsureOAuth2Client(ctx, appID); err != nil {
		return storage.OAuth2Client{}, false, err
	}
	c, err := scanClient(db.pool.QueryRow(ctx, `UPDATE oauth2_clients c SET client_type = 'confidential', secret_hash = $2, rotated_at = now()
		WHERE c.app_id = $1 AND secret_hash IS DISTINCT FROM $2 RETURNING `+clientColumns, appID, HashSecret(secret)))
	if errors.Is(err, pgx.ErrNoRows) {
		c, err = scanClient(db.pool.QueryRow(ctx, `SELECT `+clientColumns+` FROM oauth2_clients c WHERE c.app_id = $1`, appID))
		return c, false, wrap(op, err)
	}
	return c, err == nil, wrap(op, err)
}

// ExchangeOAuth1Token makes an OAuth 2.0 grant from an OAuth 1.0a access
// token in one transaction (the token exchange grant): check sees the
// unrevoked token (the caller's client, secret and scope checks) and
// returns the tokens to issue; the grant a previous exchange of the same
// user made for the same app is revoked, and a new family, marked as
// exchanged, holds the tokens. The token row is locked, so concurrent
// exchanges of one token leave one live grant. An unknown or revoked
// token is ErrNotFound.
func (db *DB) ExchangeOAuth1Token(ctx context.Context, token string, now time.Time, check func(storage.AccessToken) (storage.OAuth2Issued, error)) (storage.AccessToken, error) {
	var t storage.AccessToken
	err := db.inTx(ctx, "exchange OAuth 1.0a token", func(tx pgx.Tx) error {
		var err error
		t, err = scanToken(tx.QueryRow(ctx, `SELECT `+tokenColumns+` FROM access_tokens
			WHERE token = $1 AND revoked_at IS NULL FOR UPDATE`, token))
		if err != nil {
			return err
		}
		issued, err := check(t)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE oauth2_families SET revoked_at = $3
			WHERE app_id = $1 AND user_id = $2 AND from_exchange AND revoked_at IS NULL`, t.AppID, t.UserID, now); err != nil {
			return err
		}
		var familyID int64
		if err := tx.QueryRow(ctx, `INSERT INTO oauth2_families (app_id, user_id, scopes, from_exchange) VALUES ($1, $2, $3, true) RETURNING id`,
			t.AppID, t.UserID, issued.Scopes).Scan(&familyID); err != nil {
			return err
		}
		return insertTokens(ctx, tx, familyID, issued)
	})
	return t, err
}
