-- Foundation: id generation, identity, posts, ads accounts, compliance jobs.

-- Core ids are 64-bit, time-ordered: milliseconds since 2010-11-04 (the
-- platform's epoch) in the high 41 bits, a cycling sequence in the low 22.
-- Any number of API replicas share the sequence, so no node ids are needed.
CREATE SEQUENCE aviary_id_seq MAXVALUE 4194303 CYCLE;

CREATE FUNCTION aviary_next_id() RETURNS bigint LANGUAGE sql AS $$
  SELECT ((floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint - 1288834974657) << 22)
         | nextval('aviary_id_seq');
$$;

CREATE TABLE apps (
  id              bigint PRIMARY KEY DEFAULT aviary_next_id(),
  name            text NOT NULL UNIQUE,
  consumer_key    text NOT NULL UNIQUE,
  consumer_secret text NOT NULL,
  callback_url    text NOT NULL DEFAULT '',
  created_at      timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bearer_tokens (
  token      text PRIMARY KEY,
  app_id     bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);
CREATE INDEX bearer_tokens_app ON bearer_tokens(app_id);

CREATE TABLE users (
  id             bigint PRIMARY KEY DEFAULT aviary_next_id(),
  username       text NOT NULL,
  name           text NOT NULL DEFAULT '',
  created_at     timestamptz NOT NULL DEFAULT now(),
  protected_at   timestamptz,
  suspended_at   timestamptz,
  deactivated_at timestamptz,
  deleted_at     timestamptz
);
CREATE UNIQUE INDEX users_username ON users (lower(username));

CREATE TABLE access_tokens (
  token        text PRIMARY KEY,
  secret       text NOT NULL,
  app_id       bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  user_id      bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  access_level text NOT NULL DEFAULT 'read-write' CHECK (access_level IN ('read', 'read-write')),
  created_at   timestamptz NOT NULL DEFAULT now(),
  revoked_at   timestamptz,
  UNIQUE (app_id, user_id)
);

CREATE TABLE ad_accounts (
  id              text PRIMARY KEY,
  name            text NOT NULL,
  user_id         bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  timezone        text NOT NULL DEFAULT 'America/New_York',
  approval_status text NOT NULL DEFAULT 'ACCEPTED',
  industry_type   text NOT NULL DEFAULT 'OTHER',
  sandbox         boolean NOT NULL DEFAULT false,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted         boolean NOT NULL DEFAULT false
);
CREATE INDEX ad_accounts_user ON ad_accounts(user_id);

CREATE TABLE posts (
  id               bigint PRIMARY KEY DEFAULT aviary_next_id(),
  author_id        bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  app_id           bigint REFERENCES apps(id) ON DELETE SET NULL,
  text             text NOT NULL,
  paid_partnership boolean NOT NULL DEFAULT false,
  created_at       timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
);
CREATE INDEX posts_author ON posts(author_id, id DESC);

CREATE TABLE compliance_jobs (
  id                  bigint PRIMARY KEY DEFAULT aviary_next_id(),
  app_id              bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  type                text NOT NULL CHECK (type IN ('tweets', 'users')),
  name                text NOT NULL DEFAULT '',
  resumable           boolean NOT NULL DEFAULT false,
  status              text NOT NULL DEFAULT 'created' CHECK (status IN ('created', 'in_progress', 'failed', 'complete')),
  upload_key          text NOT NULL,
  result_key          text NOT NULL,
  upload_url          text NOT NULL,
  download_url        text NOT NULL,
  upload_expires_at   timestamptz NOT NULL,
  download_expires_at timestamptz NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  enqueued_at         timestamptz,
  upload_checked_at   timestamptz,
  started_at          timestamptz,
  heartbeat_at        timestamptz,
  completed_at        timestamptz,
  attempts            integer NOT NULL DEFAULT 0,
  lines_read          bigint NOT NULL DEFAULT 0,
  malformed_lines     bigint NOT NULL DEFAULT 0,
  result_lines        bigint NOT NULL DEFAULT 0,
  failure_reason      text NOT NULL DEFAULT ''
);
CREATE INDEX compliance_jobs_app ON compliance_jobs(app_id, type, id DESC);
CREATE INDEX compliance_jobs_open ON compliance_jobs(status, id) WHERE status IN ('created', 'in_progress');
