-- Usage and credits (docs/usage-and-credits.md). Redis holds the live
-- counters the API checks on every metered request; these tables are their
-- durable record, written in batches by each API process, so the counts and
-- the credit balance survive the loss of Redis.

-- One app's own caps (NULL: the server's default, AVIARY_USAGE_*) and the
-- credits added to it over its lifetime (the balance is this minus the sum
-- of credits_spent below).
CREATE TABLE app_usage_settings (
  app_id        bigint PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
  read_cap      bigint CHECK (read_cap >= 0),
  write_cap     bigint CHECK (write_cap >= 0),
  credits_added bigint NOT NULL DEFAULT 0,
  updated_at    timestamptz NOT NULL DEFAULT now()
);

-- What an app used per UTC day.
CREATE TABLE app_usage_daily (
  app_id        bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  day           date   NOT NULL,
  posts_read    bigint NOT NULL DEFAULT 0,
  posts_written bigint NOT NULL DEFAULT 0,
  users_read    bigint NOT NULL DEFAULT 0,
  credits_spent bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (app_id, day)
);
