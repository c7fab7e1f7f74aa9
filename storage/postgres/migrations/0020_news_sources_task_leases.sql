-- Two things (docs/derived-data.md, docs/outages.md):
--
-- 1. A news story shows nothing of a post that is no longer visible. Every
--    story records the posts it was built from (its sources) and their
--    authors. When a source stops being visible (deleted, superseded by an
--    edit, its author protected, suspended, deactivated or deleted), the
--    transaction that changes it marks the story stale: stale stories are
--    neither searched nor looked up until news:refresh rebuilds them from
--    their remaining visible sources, or withdraws them when none remain.
--
-- 2. task_leases: a run of a sweeper-recovered task (media processing,
--    compliance jobs, audience batches) holds a lease on its record's task
--    id, renewed by a heartbeat, so a sweeper never enqueues it again while
--    that run lives, even when Redis lost the task.

ALTER TABLE news_stories
  ADD COLUMN source_post_ids   bigint[] NOT NULL DEFAULT '{}',
  ADD COLUMN source_author_ids bigint[] NOT NULL DEFAULT '{}',
  -- The lead term's counts when the story was built (storage.SpikingTerm),
  -- so a rebuild from fewer sources can say them again, less the posts
  -- that went.
  ADD COLUMN lead_last_hour    float8 NOT NULL DEFAULT 0,
  ADD COLUMN lead_baseline     float8 NOT NULL DEFAULT 0,
  ADD COLUMN lead_day          integer NOT NULL DEFAULT 0,
  ADD COLUMN stale_at          timestamptz,
  ADD COLUMN withdrawn_at      timestamptz;

-- Stories written before this migration: their cluster posts (the quoted
-- post among them) are the sources known.
UPDATE news_stories s SET source_post_ids = s.post_ids,
  source_author_ids = COALESCE((SELECT array_agg(DISTINCT p.author_id) FROM posts p WHERE p.id = ANY(s.post_ids)), '{}'),
  lead_day = s.posts;

CREATE INDEX news_stories_source_posts ON news_stories USING gin (source_post_ids) WHERE withdrawn_at IS NULL;
CREATE INDEX news_stories_source_authors ON news_stories USING gin (source_author_ids) WHERE withdrawn_at IS NULL;
CREATE INDEX news_stories_stale ON news_stories (stale_at, id) WHERE stale_at IS NOT NULL AND withdrawn_at IS NULL;

-- A post that stops being visible as it was (deleted, superseded, its text
-- changed, its row deleted) makes the stories built from it stale.
CREATE FUNCTION posts_news_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE news_stories SET stale_at = clock_timestamp()
  WHERE source_post_ids @> ARRAY[OLD.id] AND withdrawn_at IS NULL AND stale_at IS NULL;
  RETURN NULL;
END
$$;

CREATE TRIGGER posts_news_stale_update AFTER UPDATE ON posts
  FOR EACH ROW WHEN ((OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL)
    OR (OLD.superseded_at IS NULL AND NEW.superseded_at IS NOT NULL)
    OR OLD.text IS DISTINCT FROM NEW.text)
  EXECUTE FUNCTION posts_news_stale();
CREATE TRIGGER posts_news_stale_delete AFTER DELETE ON posts
  FOR EACH ROW EXECUTE FUNCTION posts_news_stale();

-- An author who stops being public (protected, suspended, deactivated,
-- deleted) makes the stories built from their posts stale.
CREATE FUNCTION users_news_stale() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE news_stories SET stale_at = clock_timestamp()
  WHERE source_author_ids @> ARRAY[OLD.id] AND withdrawn_at IS NULL AND stale_at IS NULL;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER users_news_stale_update AFTER UPDATE ON users
  FOR EACH ROW WHEN ((OLD.protected_at IS NULL AND NEW.protected_at IS NOT NULL)
    OR (OLD.suspended_at IS NULL AND NEW.suspended_at IS NOT NULL)
    OR (OLD.deactivated_at IS NULL AND NEW.deactivated_at IS NOT NULL)
    OR (OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL))
  EXECUTE FUNCTION users_news_stale();
CREATE TRIGGER users_news_stale_delete BEFORE DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION users_news_stale();

-- One live run's hold on a task id (workers/sweep.Hold): holder is the run,
-- expires_at is renewed by its heartbeat. Times are the database's clock,
-- so replicas' clocks do not matter.
CREATE TABLE task_leases (
  task_id    text PRIMARY KEY,
  holder     text NOT NULL,
  expires_at timestamptz NOT NULL
);
