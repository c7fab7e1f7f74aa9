-- Webhook configs (docs/webhooks.md): one row per URL an app registered
-- with POST /2/webhooks. A URL is unique among an app's live webhooks; a
-- deleted webhook keeps its row (deleted_at) so deliveries and replay jobs
-- of later migrations may keep pointing at it. The per-app cap is checked
-- in the insert's transaction under the app row's lock.
--
-- CRC state: last_crc_at is the last check's start (the sweeper's claim
-- too: a row checked in the last interval is not picked again),
-- last_crc_ok_at the last pass, crc_failure why the last check failed
-- ('' after a pass); valid turns false after a permanent failure (wrong
-- token, a redirect, a TLS error) or a transient one more than 28 h after
-- the last pass, and true again after a pass.

CREATE TABLE webhooks (
  id             bigint PRIMARY KEY DEFAULT aviary_next_id(),
  app_id         bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  url            text NOT NULL CHECK (url <> ''),
  valid          boolean NOT NULL DEFAULT true,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_crc_at    timestamptz,
  last_crc_ok_at timestamptz,
  crc_failure    text NOT NULL DEFAULT '',
  deleted_at     timestamptz
);
CREATE UNIQUE INDEX webhooks_app_url ON webhooks (app_id, url) WHERE deleted_at IS NULL;
CREATE INDEX webhooks_app ON webhooks (app_id, id) WHERE deleted_at IS NULL;
CREATE INDEX webhooks_crc_due ON webhooks (last_crc_ok_at NULLS FIRST) WHERE deleted_at IS NULL;
