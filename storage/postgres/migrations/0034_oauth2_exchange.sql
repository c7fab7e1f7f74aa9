-- Token exchange (docs/oauth.md): a grant made by exchanging an OAuth 1.0a
-- access token is marked, so exchanging the same user's token again for
-- the same app revokes the grant the previous exchange made (and no
-- authorization-code grant of that user).
ALTER TABLE oauth2_families ADD COLUMN from_exchange boolean NOT NULL DEFAULT false;
CREATE INDEX oauth2_families_exchange ON oauth2_families (app_id, user_id) WHERE from_exchange AND revoked_at IS NULL;
