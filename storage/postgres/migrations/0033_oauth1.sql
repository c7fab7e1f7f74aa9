-- OAuth 1.0a three-legged flow (docs/oauth.md, "OAuth 1.0a"): request
-- tokens and the apps' "Sign in with" setting. Remembered approvals are not
-- a table: an app is approved by a user while a live access_tokens row for
-- (app, user) exists (UNIQUE (app_id, user_id)) with enough access level.
--
-- A request token's secret stays readable (HMAC needs it); its verifier is
-- stored as SHA-256. A token is single use (used_at) and short lived.
CREATE TABLE oauth1_request_tokens (
  token         text PRIMARY KEY,
  secret        text NOT NULL,
  app_id        bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  callback      text NOT NULL CHECK (callback <> ''),
  access_level  text NOT NULL CHECK (access_level IN ('read', 'read-write')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL,
  user_id       bigint REFERENCES users(id) ON DELETE CASCADE,
  verifier_hash bytea,
  authorized_at timestamptz,
  denied_at     timestamptz,
  used_at       timestamptz,
  CHECK ((user_id IS NULL) = (verifier_hash IS NULL))
);
CREATE INDEX oauth1_request_tokens_expires ON oauth1_request_tokens (expires_at);

-- "Sign in with": GET /oauth/authenticate skips the consent page for a
-- user who already approved the app, when the app enables it.
ALTER TABLE apps ADD COLUMN sign_in_enabled boolean NOT NULL DEFAULT false;
