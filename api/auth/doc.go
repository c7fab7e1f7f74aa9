// Package auth authenticates API requests.
//
// Two credential kinds are accepted, as on the public platform:
//
//   - app-only OAuth 2.0 bearer tokens: "Authorization: Bearer <token>";
//   - OAuth 1.0a user context (RFC 5849): "Authorization: OAuth ..." signed
//     with HMAC-SHA1 over the consumer secret and the access token secret.
//
// An Authenticator turns either into a Principal stored in the request
// context (see PrincipalFrom). Its middlewares (RequireApp, RequireUser,
// RequireBearer) answer failures with *apierr.Error values rendered through
// an apierr.Writer: missing, malformed or unknown credentials are 401,
// credentials of a kind the endpoint does not take are 403
// unsupported-authentication, and unexpected store failures are passed to
// the writer, which logs them and renders 500.
//
// SignRequest is the client side of the same scheme, for tools and tests.
package auth
