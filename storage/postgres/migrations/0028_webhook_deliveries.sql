-- Webhook deliveries, stream links and replay jobs (docs/webhooks.md).
--
-- A stream link routes the posts matching an app's filtered-stream rules
-- to one of its webhooks, rendered with the link's fields. The dispatcher's
-- webhook sink (workers/webhooks) renders each matching post once per
-- link and records one delivery per (webhook, event) in the same
-- transaction as its pg_notify('aviary_webhook_deliveries'); the
-- deliverer sends a webhook's pending deliveries in id order (its queue),
-- one replica per webhook at a time under the webhook's delivery lease.

CREATE TABLE webhook_stream_links (
  webhook_id bigint PRIMARY KEY REFERENCES webhooks(id) ON DELETE CASCADE,
  app_id     bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  -- The link's fields and expansions as a canonical query string
  -- ("expansions=author_id&tweet.fields=created_at"), checked when the
  -- link was made; '' for the defaults.
  query      text NOT NULL DEFAULT '',
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX webhook_stream_links_app ON webhook_stream_links (app_id);

-- A replay job re-delivers the stored deliveries of a window to their
-- webhook, then a replay_job_status event. One job at a time per webhook
-- (the partial unique index: ReplayConflictError).
CREATE TABLE webhook_replay_jobs (
  id          bigint PRIMARY KEY DEFAULT aviary_next_id(),
  app_id      bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  webhook_id  bigint NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  -- The window: from_at inclusive, to_at exclusive (the request's to_date
  -- minute is included: to_at = to_date + 1 minute).
  from_at     timestamptz NOT NULL,
  to_at       timestamptz NOT NULL CHECK (to_at > from_at),
  state       text NOT NULL DEFAULT 'queued'
              CHECK (state IN ('queued', 'running', 'complete', 'incomplete')),
  -- How many deliveries the job queued (set when it starts running).
  events      integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  started_at  timestamptz,
  finished_at timestamptz,
  -- The sweeper's bookkeeping (workers/sweep): when it last looked.
  swept_at    timestamptz
);
CREATE UNIQUE INDEX webhook_replay_jobs_active ON webhook_replay_jobs (webhook_id)
  WHERE state IN ('queued', 'running');
CREATE INDEX webhook_replay_jobs_queued ON webhook_replay_jobs (swept_at NULLS FIRST)
  WHERE state = 'queued';

-- One message to one webhook. kind 'post' is a filtered-stream post
-- (event_seq: the post.create event); 'replay_status' is the event that
-- ends a replay job (its body is written when it is sent). A live
-- delivery is unique per (webhook, event); a replay copy names its job,
-- a redelivery the delivery it repeats.
CREATE TABLE webhook_deliveries (
  id              bigserial PRIMARY KEY,
  webhook_id      bigint NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
  app_id          bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  kind            text NOT NULL CHECK (kind IN ('post', 'replay_status')),
  event_seq       bigint NOT NULL DEFAULT 0,
  -- The event's time (replay windows select by it).
  event_at        timestamptz NOT NULL,
  replay_job_id   bigint REFERENCES webhook_replay_jobs(id) ON DELETE CASCADE,
  redelivery_of   bigint REFERENCES webhook_deliveries(id) ON DELETE SET NULL,
  -- The exact bytes POSTed (signed when sent, with the app's secret then).
  body            bytea NOT NULL,
  state           text NOT NULL DEFAULT 'pending'
                  CHECK (state IN ('pending', 'delivered', 'dead')),
  -- Why a dead delivery died: 'unreachable' (no answer, 5xx, 408, 429:
  -- the webhook turned failing and these go again when it answers) or
  -- 'rejected' (another 4xx: parked until redelivered by hand).
  dead_reason     text CHECK (dead_reason IN ('unreachable', 'rejected')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_attempt_at timestamptz,
  last_status     integer NOT NULL DEFAULT 0,
  last_latency_ms integer NOT NULL DEFAULT 0,
  last_error      text NOT NULL DEFAULT '',
  delivered_at    timestamptz,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE UNIQUE INDEX webhook_deliveries_live ON webhook_deliveries (webhook_id, event_seq)
  WHERE replay_job_id IS NULL AND redelivery_of IS NULL AND kind = 'post';
-- A webhook's queue, and its log (newest first).
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (webhook_id, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_dead ON webhook_deliveries (webhook_id, id) WHERE state = 'dead';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (webhook_id, id DESC);
CREATE INDEX webhook_deliveries_window ON webhook_deliveries (webhook_id, event_at)
  WHERE replay_job_id IS NULL AND redelivery_of IS NULL AND kind = 'post';
CREATE INDEX webhook_deliveries_job ON webhook_deliveries (replay_job_id) WHERE replay_job_id IS NOT NULL;
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);

-- Every attempt at a delivery (the delivery log's detail).
CREATE TABLE webhook_delivery_attempts (
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt     integer NOT NULL,
  started_at  timestamptz NOT NULL,
  -- The HTTP status (0: no answer), the time to the answer's status line.
  status      integer NOT NULL DEFAULT 0,
  latency_ms  integer NOT NULL DEFAULT 0,
  error       text NOT NULL DEFAULT '',
  PRIMARY KEY (delivery_id, attempt)
);

-- A webhook's delivery state: the lease of the deliverer sending its queue
-- (one replica at a time keeps the order), whether it is failing (its
-- head died unreachable: only probes go until one is answered) and when.
ALTER TABLE webhooks
  ADD COLUMN delivery_holder     text,
  ADD COLUMN delivery_held_until timestamptz,
  ADD COLUMN failing_since       timestamptz,
  ADD COLUMN next_probe_at       timestamptz,
  ADD COLUMN last_delivered_at   timestamptz;
