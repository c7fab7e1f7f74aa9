-- Filtered-stream rules (docs/streams-rules.md): one row per rule of an
-- app, its value unique within the app. stream_rules_version is a single
-- counter bumped in the same transaction as any change to the rules, so
-- the dispatcher's matcher (workers/dispatch/streams.go) reloads the rule
-- set only when it moved; its row lock also serializes rule changes, which
-- keeps the per-app cap exact under concurrent requests.

CREATE TABLE stream_rules (
  id         bigint PRIMARY KEY DEFAULT aviary_next_id(),
  app_id     bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  value      text NOT NULL,
  tag        text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (app_id, value)
);
CREATE INDEX stream_rules_app ON stream_rules (app_id, id);

CREATE TABLE stream_rules_version (
  one     boolean PRIMARY KEY DEFAULT true CHECK (one),
  version bigint NOT NULL DEFAULT 0
);
INSERT INTO stream_rules_version DEFAULT VALUES;
