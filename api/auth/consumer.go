package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// TokenSecret returns the secret of the token a consumer-signed request
// names (a request token, an access token), after checking that it belongs
// to app. A miss is an error wrapping storage.ErrNotFound.
type TokenSecret func(ctx context.Context, app storage.App, token string) (secret string, err error)

// Consumer is a verified request signed with consumer credentials.
type Consumer struct {
	App storage.App
	// Token is oauth_token ("" when the request carried none).
	Token string
	// Params are the request's protocol and request parameters: the
	// Authorization header's oauth_* values, then the query's and the
	// form body's.
	Params url.Values
}

// VerifyConsumer authenticates an OAuth 1.0a request of the authorization
// endpoints (POST /oauth/request_token, /oauth/access_token,
// /oauth/invalidate_token): signed with consumer credentials and, when it
// names an oauth_token, that token's secret, which tokenSecret supplies
// (nil: the request must name no token). It applies the API's rules: the
// timestamp window, the public base URL and its loopback spellings, and
// nonce replay (recorded last, so only well signed requests use one).
// Failures are *apierr.Error (401, or 503 when the nonce store is down).
func (a *Authenticator) VerifyConsumer(r *http.Request, tokenSecret TokenSecret) (Consumer, error) {
	scheme, header, err := authorization(r)
	if err != nil {
		return Consumer{}, err
	}
	if scheme != schemeOAuth {
		return Consumer{}, apierr.Unauthorized("This endpoint takes an OAuth 1.0a signature (Authorization: OAuth ...).")
	}
	params, err := parseOAuthParams(header)
	if err != nil {
		return Consumer{}, apierr.Unauthorized("Could not parse the OAuth Authorization header (" + err.Error() + ").")
	}
	creds, err := parseCredentials(params, false)
	if err != nil {
		return Consumer{}, err
	}
	if creds.token != "" && tokenSecret == nil {
		return Consumer{}, apierr.Unauthorized("This endpoint is signed with consumer credentials only; send no oauth_token.")
	}
	if err := a.checkTimestamp(creds.timestamp); err != nil {
		return Consumer{}, err
	}
	app, err := a.store.AppByConsumerKey(r.Context(), creds.consumerKey)
	if err != nil {
		return Consumer{}, lookupError(err, "consumer key", "Invalid oauth_consumer_key.")
	}
	secret := ""
	if creds.token != "" {
		if secret, err = tokenSecret(r.Context(), app, creds.token); err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return Consumer{}, apierr.Unauthorized("Invalid or expired oauth_token.")
			}
			return Consumer{}, err
		}
	}
	if err := a.verifySignature(r, creds, app.ConsumerSecret, secret); err != nil {
		deduped, ok := withoutRepeats(r, creds)
		if !ok || a.verifySignature(r, deduped, app.ConsumerSecret, secret) != nil {
			return Consumer{}, err
		}
	}
	if err := a.useNonce(r.Context(), creds); err != nil {
		return Consumer{}, err
	}
	all, err := requestParams(r)
	if err != nil {
		return Consumer{}, err
	}
	for name, values := range creds.signed {
		all[name] = append(values, all[name]...)
	}
	return Consumer{App: app, Token: creds.token, Params: all}, nil
}

// withoutRepeats is creds without the header parameters the query or form
// body repeats with the same value. Some clients (twitter-api-v2's login
// sends oauth_token and oauth_verifier in the body too) merge the two sets
// before signing, so each such pair enters their base string once, where
// RFC 5849 counts it twice. False when nothing is repeated.
func withoutRepeats(r *http.Request, creds oauthCredentials) (oauthCredentials, bool) {
	params, err := requestParams(r)
	if err != nil {
		return creds, false
	}
	signed := url.Values{}
	repeated := false
	for name, values := range creds.signed {
		if len(values) == 1 && len(params[name]) == 1 && params[name][0] == values[0] {
			repeated = true
			continue
		}
		signed[name] = values
	}
	creds.signed = signed
	return creds, repeated
}
