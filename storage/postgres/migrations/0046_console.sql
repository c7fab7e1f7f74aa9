-- The developer console (docs/console.md): an app belongs to the user who
-- created it in the console (owner_id; apps made by `aviary admin` have
-- none, and the bootstrap app belongs to the demo user), and a user may be
-- a console administrator, who sees every app and user.
ALTER TABLE apps ADD COLUMN owner_id bigint REFERENCES users(id) ON DELETE SET NULL;
CREATE INDEX apps_owner ON apps (owner_id) WHERE owner_id IS NOT NULL;
ALTER TABLE users ADD COLUMN is_admin boolean NOT NULL DEFAULT false;
