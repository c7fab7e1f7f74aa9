package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
)

// MaxClockSkew is how far oauth_timestamp may be from the server clock, in
// either direction.
const MaxClockSkew = 5 * time.Minute

// nonceTTL keeps a nonce for as long as its timestamp can still be accepted.
const nonceTTL = 2 * MaxClockSkew

// oauth1 authenticates an OAuth 1.0a user-context request. The nonce is
// recorded last, so only correctly signed requests consume one.
func (a *Authenticator) oauth1(r *http.Request, header string) (Principal, error) {
	params, err := parseOAuthParams(header)
	if err != nil {
		return Principal{}, apierr.Unauthorized("Could not parse the OAuth Authorization header (" + err.Error() + ").")
	}
	creds, err := credentialsFrom(params)
	if err != nil {
		return Principal{}, err
	}
	if err := a.checkTimestamp(creds.timestamp); err != nil {
		return Principal{}, err
	}
	app, token, err := a.oauthSecrets(r.Context(), creds)
	if err != nil {
		return Principal{}, err
	}
	if err := a.verifySignature(r, creds, app.ConsumerSecret, token.Secret); err != nil {
		return Principal{}, err
	}
	if err := a.useNonce(r.Context(), creds); err != nil {
		return Principal{}, err
	}
	user, err := a.store.UserByID(r.Context(), token.UserID)
	if err != nil {
		return Principal{}, lookupError(err, "token user", userGoneDetail)
	}
	if err := accountError(user); err != nil {
		return Principal{}, err
	}
	return Principal{App: app, User: &user, Token: &token, Method: MethodOAuth1, Scopes: oauth2.OAuth1Scopes(token.CanWrite())}, nil
}

const userGoneDetail = "The user of this access token no longer exists."

// accountError refuses users whose account may not act: a deleted or
// deactivated account no longer authenticates (401), a suspended one is
// forbidden (403). Protected accounts act normally.
func accountError(u storage.User) error {
	switch {
	case u.DeletedAt != nil:
		return apierr.Unauthorized(userGoneDetail)
	case u.DeactivatedAt != nil:
		return apierr.Unauthorized("The user of this access token has deactivated their account.")
	case u.SuspendedAt != nil:
		return apierr.AccountSuspended()
	}
	return nil
}

func (a *Authenticator) checkTimestamp(ts int64) error {
	skew := a.now().Sub(time.Unix(ts, 0))
	if skew > MaxClockSkew || skew < -MaxClockSkew {
		return apierr.Unauthorized("oauth_timestamp is more than 5 minutes away from the server clock.")
	}
	return nil
}

// oauthSecrets loads the app and access token and checks they belong together.
func (a *Authenticator) oauthSecrets(ctx context.Context, creds oauthCredentials) (storage.App, storage.AccessToken, error) {
	app, err := a.store.AppByConsumerKey(ctx, creds.consumerKey)
	if err != nil {
		return storage.App{}, storage.AccessToken{}, lookupError(err, "consumer key", "Invalid oauth_consumer_key.")
	}
	token, err := a.store.AccessToken(ctx, creds.token)
	if err != nil {
		return storage.App{}, storage.AccessToken{}, lookupError(err, "access token", "Invalid or expired oauth_token.")
	}
	if token.AppID != app.ID {
		return storage.App{}, storage.AccessToken{}, apierr.Unauthorized("Invalid or expired oauth_token.")
	}
	return app, token, nil
}

func (a *Authenticator) verifySignature(r *http.Request, creds oauthCredentials, consumerSecret, tokenSecret string) error {
	params, err := requestParams(r)
	if errors.Is(err, errMalformedParams) {
		return apierr.Unauthorized("Could not verify the signature: " + err.Error() + ".")
	}
	if err != nil {
		return err
	}
	for name, values := range creds.signed {
		params[name] = append(params[name], values...)
	}
	base := baseURL(r, a.public)
	if signedOver(r.Method, base, params, creds.signature, consumerSecret, tokenSecret) {
		return nil
	}
	checked := base
	if alias, ok := loopbackBase(r, a.public); ok && a.loopback {
		if signedOver(r.Method, alias, params, creds.signature, consumerSecret, tokenSecret) {
			return nil
		}
		checked += " and " + alias
	}
	ok, others := a.signedOverBases(r, params, creds, consumerSecret, tokenSecret)
	if ok {
		return nil
	}
	for _, b := range others {
		checked += " and " + b
	}
	return apierr.Unauthorized(signatureDetail(checked, a.public != nil))
}

// signedOver reports whether signature is the one of the request with
// method, base URL and params.
func signedOver(method, base string, params url.Values, signature, consumerSecret, tokenSecret string) bool {
	want := Sign(SignatureBaseString(method, base, params), consumerSecret, tokenSecret)
	return subtle.ConstantTimeCompare([]byte(want), []byte(signature)) == 1
}

// signatureDetail is the detail of a signature mismatch: it names the base
// URL(s) the signature was checked against, the usual culprit (a client that
// signs over another host, scheme, port or path than the server's public
// URL).
func signatureDetail(checked string, configured bool) string {
	from := "the request's scheme and Host"
	if configured {
		from = "the server's public URL"
	}
	return "Invalid oauth_signature. It was checked against the base URL " + checked + " (" + from +
		" and the request path): sign over that URL, or check the consumer and token secrets."
}

func (a *Authenticator) useNonce(ctx context.Context, creds oauthCredentials) error {
	fresh, err := a.nonces.Use(ctx, nonceKey(creds.consumerKey, creds.token, creds.nonce), nonceTTL)
	if err != nil {
		return fmt.Errorf("auth: check nonce: %w", err)
	}
	if !fresh {
		return apierr.Unauthorized("oauth_nonce was already used; sign every request with a new nonce.")
	}
	return nil
}
