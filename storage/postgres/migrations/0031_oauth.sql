-- OAuth (docs/oauth.md), part one: the accounts people log in with and the
-- OAuth 2.0 authorization server. Part two (OAuth 1.0a three-legged flow,
-- token exchange) adds request tokens and app approvals in its own
-- migration and reuses app_callback_urls and the web secrets.
--
-- Users log in to the web tier with a password (argon2id, PHC string; ''
-- means the user cannot log in). Apps register callback URLs that
-- redirect_uri (and later oauth_callback) must match exactly.

ALTER TABLE users ADD COLUMN password_hash text NOT NULL DEFAULT '';

CREATE TABLE app_callback_urls (
  app_id     bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  url        text NOT NULL CHECK (url <> ''),
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (app_id, url)
);

-- An app's OAuth 2.0 client: client_id is public; the secret of a
-- confidential client is stored as its SHA-256 (it is a long random string,
-- so a fast hash is enough); a public client has none.
CREATE TABLE oauth2_clients (
  app_id      bigint PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
  client_id   text NOT NULL UNIQUE,
  client_type text NOT NULL DEFAULT 'confidential' CHECK (client_type IN ('confidential', 'public')),
  secret_hash bytea,
  created_at  timestamptz NOT NULL DEFAULT now(),
  rotated_at  timestamptz,
  CHECK ((client_type = 'public') = (secret_hash IS NULL))
);

-- Authorization codes: single use (used_at), short lived (expires_at),
-- stored as SHA-256, bound to the client, the exact redirect_uri and the
-- PKCE challenge. family_id is the grant the exchange created: a code
-- presented again revokes it (RFC 6749 section 4.1.2).
CREATE TABLE oauth2_codes (
  code_hash        bytea PRIMARY KEY,
  app_id           bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  user_id          bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  redirect_uri     text NOT NULL,
  scopes           text[] NOT NULL,
  code_challenge   text NOT NULL,
  challenge_method text NOT NULL CHECK (challenge_method IN ('S256', 'plain')),
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL,
  used_at          timestamptz,
  family_id        bigint
);
CREATE INDEX oauth2_codes_expires ON oauth2_codes (expires_at);

-- A grant family: one user's consent to one app, from the code exchange
-- through every refresh. Revoking the family (refresh token reuse, revoke)
-- refuses all its tokens at once.
CREATE TABLE oauth2_families (
  id         bigint PRIMARY KEY DEFAULT aviary_next_id(),
  app_id     bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  user_id    bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  scopes     text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX oauth2_families_app_user ON oauth2_families (app_id, user_id);

-- Access and refresh tokens, stored as SHA-256. A refresh token is used
-- once: used_at is set when it is rotated; presenting it again revokes its
-- family.
CREATE TABLE oauth2_tokens (
  token_hash bytea PRIMARY KEY,
  kind       text NOT NULL CHECK (kind IN ('access', 'refresh')),
  family_id  bigint NOT NULL REFERENCES oauth2_families(id) ON DELETE CASCADE,
  scopes     text[] NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at    timestamptz,
  revoked_at timestamptz
);
CREATE INDEX oauth2_tokens_family ON oauth2_tokens (family_id);

-- Secrets the web tier generates once and every replica shares (the
-- session cookie key when AVIARY_WEB_SESSION_KEY is unset).
CREATE TABLE web_secrets (
  name       text PRIMARY KEY,
  secret     bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
