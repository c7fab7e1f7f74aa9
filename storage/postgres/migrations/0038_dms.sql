-- Direct messages and XChat (docs/direct-messages.md).
--
-- A conversation is one-to-one (id "<smaller user id>-<larger user id>",
-- the platform's form) or a group (id a core id in decimal). Its
-- participants are rows of dm_participants; a user sees a conversation
-- only while they are a participant.
CREATE TABLE dm_conversations (
  id         text PRIMARY KEY,
  kind       text NOT NULL CHECK (kind IN ('one_to_one', 'group')),
  created_by bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE dm_participants (
  conversation_id    text NOT NULL REFERENCES dm_conversations(id) ON DELETE CASCADE,
  user_id            bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  joined_at          timestamptz NOT NULL DEFAULT now(),
  -- The last message the participant marked read (0: none).
  last_read_event_id bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (conversation_id, user_id)
);
CREATE INDEX dm_participants_user ON dm_participants (user_id);

-- The conversation's events, as GET /2/dm_events lists them.
CREATE TABLE dm_events (
  id              bigint PRIMARY KEY DEFAULT aviary_next_id(),
  conversation_id text NOT NULL REFERENCES dm_conversations(id) ON DELETE CASCADE,
  event_type      text NOT NULL CHECK (event_type IN ('MessageCreate', 'ParticipantsJoin', 'ParticipantsLeave')),
  sender_id       bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  app_id          bigint REFERENCES apps(id) ON DELETE SET NULL,
  text            text NOT NULL DEFAULT '',
  media_ids       bigint[] NOT NULL DEFAULT '{}',
  -- ParticipantsJoin / ParticipantsLeave: who joined or left.
  participant_ids bigint[] NOT NULL DEFAULT '{}',
  created_at      timestamptz NOT NULL DEFAULT now(),
  -- A message deleted by its sender is hidden from every participant.
  deleted_at      timestamptz
);
CREATE INDEX dm_events_conversation ON dm_events (conversation_id, id DESC);

-- XChat (encrypted chat) messages and memberships, written by `aviary
-- admin chat` (the platform has no public endpoint for them).
CREATE TABLE chat_members (
  conversation_id text NOT NULL,
  user_id         bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  joined_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, user_id)
);

CREATE TABLE chat_messages (
  id              uuid PRIMARY KEY,
  conversation_id text NOT NULL,
  sender_id       bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  recipient_id    bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  text            text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_messages_conversation ON chat_messages (conversation_id, created_at);
