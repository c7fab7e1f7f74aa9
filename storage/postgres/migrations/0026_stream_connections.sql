-- Streaming connections (docs/streams.md): one row per connection to a
-- streaming endpoint, open or closed, so GET /2/connections lists active and
-- historical ones and any replica can ask the one holding a connection to
-- end it.
--
-- A connection is open while disconnected_at IS NULL and its replica's hub
-- renewed heartbeat_at within the last 30 seconds (the database's clock):
-- a replica that died leaves rows nobody renews, which stop counting
-- against the app's limit and are closed (reason heartbeat_lost) by the
-- next open or heartbeat.
CREATE TABLE stream_connections (
  id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  app_id                 bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  -- The platform's endpoint id (filtered_stream).
  endpoint               text NOT NULL,
  client_ip              text NOT NULL DEFAULT '',
  -- The API replica holding the connection (its hub's name).
  replica                text NOT NULL DEFAULT '',
  connected_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  disconnected_at        timestamptz,
  disconnect_reason      text NOT NULL DEFAULT '',
  heartbeat_at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- Set by the connections endpoints; the holding replica ends the stream
  -- (pub/sub control at once, its 2-second poll otherwise).
  terminate_requested_at timestamptz
);

-- History per app, newest first (GET /2/connections pages by it).
CREATE INDEX stream_connections_app ON stream_connections (app_id, connected_at DESC, id DESC);
-- Open rows: the limit count, the heartbeats and the stale sweep.
CREATE INDEX stream_connections_open ON stream_connections (app_id, endpoint) WHERE disconnected_at IS NULL;
