// Package auth authenticates API requests.
//
// Three credential kinds are accepted, as on the public platform:
//
//   - app-only OAuth 2.0 bearer tokens: "Authorization: Bearer <token>";
//   - OAuth 2.0 user access tokens (authorization code with PKCE, issued by
//     web/oauth), sent the same way and carrying scopes;
//   - OAuth 1.0a user context (RFC 5849): "Authorization: OAuth ..." signed
//     with HMAC-SHA1 over the consumer secret and the access token secret.
//
// An Authenticator turns either into a Principal stored in the request
// context (see PrincipalFrom). Each endpoint states a Requirement (which
// credential kinds, whether it writes, the OAuth 2.0 scopes a user token must carry), and the one
// middleware Authenticator.Middleware builds from it answers failures with *apierr.Error values rendered through
// an apierr.Writer: missing, malformed or unknown credentials are 401 (keys
// and tokens that are not printable ASCII are refused before any lookup),
// credentials of a kind the endpoint does not take are 403
// unsupported-authentication, a store or nonce store that is down or too
// slow (storage.ErrUnavailable) is 503 with Retry-After (fail closed), and
// other store failures are passed to the writer, which logs them and
// renders 500.
//
// SignRequest is the client side of the same scheme, for tools and tests.
package auth
