-- The event log (docs/events.md): every change an event can report appends
-- its events in the same transaction as the change (storage/postgres
-- appendEvents), so no event is lost and none describes a change that
-- rolled back.
--
-- seq grows in COMMIT order: the append takes one transaction-scoped
-- advisory lock, then draws seq from events_seq, as the last statement of
-- the writing transaction. The lock is held until the commit, so a
-- transaction that draws a higher seq commits after every lower one: a
-- reader that has seen every event up to N never finds a later-committed
-- event at or below N. A rolled-back append leaves a gap, never a reorder.

CREATE SEQUENCE events_seq AS bigint;

CREATE TABLE events (
  seq        bigint PRIMARY KEY,
  type       text NOT NULL,
  -- The app the change was made with, the acting user and the changed
  -- record (a post id for post events); 0 when none.
  app_id     bigint NOT NULL DEFAULT 0,
  user_id    bigint NOT NULL DEFAULT 0,
  subject_id bigint NOT NULL DEFAULT 0,
  payload    jsonb NOT NULL,
  -- The append's clock, a moment before the commit (backfill reads by it).
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Backfill (EventsSince) and the retention sweep read by time.
CREATE INDEX events_created_at ON events (created_at);

-- A dispatcher's committed position in the log, and its lease: only the
-- holder whose lease has not expired (held_until, the database's clock)
-- dispatches for the cursor name and may move seq.
CREATE TABLE event_cursors (
  name       text PRIMARY KEY,
  seq        bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  holder     text,
  held_until timestamptz
);
