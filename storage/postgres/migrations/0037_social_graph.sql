-- The social graph (docs/social-graph.md): follows (with pending follow
-- requests to protected accounts), mutes and blocks, each a (source,
-- target) pair of users. seq orders a user's lists, newest first, and is
-- the lists' page cursor.
CREATE TABLE follows (
  source_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  target_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  -- A request to follow a protected account: not a follow (not counted,
  -- not listed, no event) until it is accepted.
  pending    boolean NOT NULL DEFAULT false,
  seq        bigint GENERATED ALWAYS AS IDENTITY,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source_id, target_id),
  CHECK (source_id <> target_id)
);
CREATE INDEX follows_source_seq ON follows (source_id, seq) WHERE NOT pending;
CREATE INDEX follows_target_seq ON follows (target_id, seq) WHERE NOT pending;

CREATE TABLE mutes (
  source_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  target_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  seq        bigint GENERATED ALWAYS AS IDENTITY,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source_id, target_id),
  CHECK (source_id <> target_id)
);
CREATE INDEX mutes_source_seq ON mutes (source_id, seq);

CREATE TABLE blocks (
  source_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  target_id  bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  seq        bigint GENERATED ALWAYS AS IDENTITY,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (source_id, target_id),
  CHECK (source_id <> target_id)
);
CREATE INDEX blocks_source_seq ON blocks (source_id, seq);
CREATE INDEX blocks_target ON blocks (target_id, source_id);
