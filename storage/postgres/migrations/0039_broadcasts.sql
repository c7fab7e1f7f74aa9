-- Spaces, broadcasts and their chat (docs/spaces-broadcasts.md), made by
-- `aviary admin space|broadcast` commands, each change appending its
-- activity event (spaces.*, broadcast.*) in the same transaction; and the
-- two profile fields whose updates are activity events
-- (profile.update.banner_picture, profile.update.affiliate_badge).

ALTER TABLE users
  ADD COLUMN profile_banner_url text NOT NULL DEFAULT '',
  ADD COLUMN affiliate_badge    boolean NOT NULL DEFAULT false;

-- A Space: its id is the platform's kind, 13 letters and digits.
CREATE TABLE spaces (
  id         text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9]{13}$'),
  host_id    bigint NOT NULL REFERENCES users(id),
  title      text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at   timestamptz
);
CREATE INDEX spaces_host ON spaces (host_id, created_at DESC);

-- A live broadcast (video), owned by user_id; moderators may remove chat
-- messages, as the owner may.
CREATE TABLE broadcasts (
  id         text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9]{13}$'),
  user_id    bigint NOT NULL REFERENCES users(id),
  title      text NOT NULL,
  language   text NOT NULL DEFAULT 'en',
  moderators bigint[] NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at   timestamptz
);
CREATE INDEX broadcasts_user ON broadcasts (user_id, created_at DESC);

-- A broadcast's chat: removal is a mark (who, when).
CREATE TABLE broadcast_chat_messages (
  id           bigint PRIMARY KEY DEFAULT aviary_next_id(),
  broadcast_id text NOT NULL REFERENCES broadcasts(id),
  user_id      bigint NOT NULL REFERENCES users(id),
  text         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  removed_at   timestamptz,
  removed_by   bigint REFERENCES users(id)
);
CREATE INDEX broadcast_chat_messages_broadcast ON broadcast_chat_messages (broadcast_id, id);

