-- Keyword insights (docs/insights.md): aggregates of the posts that workers
-- keep, fed by a change log that the posts table writes itself.

-- Places a post may name in geo.place_id, each in one country; operators
-- add them with `aviary admin place set`.
CREATE TABLE places (
  id           text PRIMARY KEY,
  country_code text NOT NULL CHECK (country_code ~ '^[A-Z]{2}$'),
  full_name    text NOT NULL DEFAULT '',
  created_at   timestamptz NOT NULL DEFAULT now()
);

-- A post's country, fixed when its edit chain starts: its place's country,
-- else its author's profile country at that moment, else '' (unknown). An
-- edit keeps the chain's country and its time: chain_created_at is the
-- creation time of the chain's first version (NULL on that version, whose
-- own created_at it is), so a post counts in the hour it was first posted
-- even when the first version is gone.
ALTER TABLE posts
  ADD COLUMN country_code     text NOT NULL DEFAULT '',
  ADD COLUMN chain_created_at timestamptz;

UPDATE posts p SET chain_created_at = r.created_at, country_code = r.country_code
FROM posts r WHERE r.id = p.edit_root_id AND p.edit_root_id <> p.id;

CREATE FUNCTION posts_insight_fields() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  root posts;
BEGIN
  IF NEW.edit_root_id IS NOT NULL AND NEW.edit_root_id <> NEW.id THEN
    SELECT * INTO root FROM posts r WHERE r.id = NEW.edit_root_id;
    IF FOUND THEN
      NEW.chain_created_at := COALESCE(root.chain_created_at, root.created_at);
      NEW.country_code := root.country_code;
      RETURN NEW;
    END IF;
  END IF;
  IF NEW.country_code = '' THEN
    NEW.country_code := COALESCE(
      (SELECT pl.country_code FROM places pl WHERE pl.id = NEW.place_id),
      (SELECT NULLIF(u.country_code, '') FROM users u WHERE u.id = NEW.author_id),
      '');
  END IF;
  RETURN NEW;
END
$$;

CREATE TRIGGER posts_insight_fields BEFORE INSERT ON posts
  FOR EACH ROW WHEN (NEW.repost_of_id IS NULL)
  EXECUTE FUNCTION posts_insight_fields();

-- An author anyone may see: not protected, suspended, deactivated or
-- deleted (as search shows them).
CREATE FUNCTION insight_author_public(author bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (SELECT 1 FROM users u WHERE u.id = author AND u.protected_at IS NULL
    AND u.suspended_at IS NULL AND u.deactivated_at IS NULL AND u.deleted_at IS NULL)
$$;

-- The posts that count: originals (not reposts), not deleted, the latest
-- version of their edit chain, by a public author. The aggregates are a
-- function of this view (docs/insights.md rebuilds them from it).
CREATE VIEW insight_counted_posts AS
SELECT p.id, COALESCE(p.chain_created_at, p.created_at) AS posted_at, p.country_code, p.text
FROM posts p JOIN users u ON u.id = p.author_id
WHERE p.repost_of_id IS NULL AND p.deleted_at IS NULL AND p.superseded_at IS NULL
  AND u.protected_at IS NULL AND u.suspended_at IS NULL AND u.deactivated_at IS NULL AND u.deleted_at IS NULL;

-- The change log: one row per post that starts (+1) or stops (-1)
-- counting, written in the transaction that changes the post or its
-- author, so nothing committed is missed. posted_at is the chain's first
-- creation time; text and country_code are the counted version's. Workers
-- apply the rows to the aggregates and delete them in one transaction.
CREATE TABLE insight_changes (
  seq          bigserial PRIMARY KEY,
  post_id      bigint NOT NULL,
  delta        smallint NOT NULL CHECK (delta IN (-1, 1)),
  posted_at    timestamptz NOT NULL,
  country_code text NOT NULL,
  text         text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION posts_insight_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  was     boolean := false;
  counts  boolean := false;
  changed boolean := false;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    was := OLD.repost_of_id IS NULL AND OLD.deleted_at IS NULL AND OLD.superseded_at IS NULL;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    counts := NEW.repost_of_id IS NULL AND NEW.deleted_at IS NULL AND NEW.superseded_at IS NULL;
  END IF;
  -- A post of a hidden author counts in neither state (its author's row
  -- is gone too when the posts go with their user: the user's trigger
  -- took them out first).
  IF (was OR counts) AND NOT insight_author_public(COALESCE(NEW.author_id, OLD.author_id)) THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'UPDATE' AND was AND counts THEN
    changed := OLD.text IS DISTINCT FROM NEW.text OR OLD.country_code IS DISTINCT FROM NEW.country_code
      OR COALESCE(OLD.chain_created_at, OLD.created_at) IS DISTINCT FROM COALESCE(NEW.chain_created_at, NEW.created_at);
  END IF;
  IF was AND (NOT counts OR changed) THEN
    INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
    VALUES (OLD.id, -1, COALESCE(OLD.chain_created_at, OLD.created_at), OLD.country_code, OLD.text);
  END IF;
  IF counts AND (NOT was OR changed) THEN
    INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
    VALUES (NEW.id, 1, COALESCE(NEW.chain_created_at, NEW.created_at), NEW.country_code, NEW.text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER posts_insight_insert AFTER INSERT ON posts
  FOR EACH ROW WHEN (NEW.repost_of_id IS NULL AND NEW.deleted_at IS NULL AND NEW.superseded_at IS NULL)
  EXECUTE FUNCTION posts_insight_changes();
CREATE TRIGGER posts_insight_update AFTER UPDATE ON posts
  FOR EACH ROW WHEN (OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
    OR OLD.superseded_at IS DISTINCT FROM NEW.superseded_at
    OR OLD.repost_of_id IS DISTINCT FROM NEW.repost_of_id
    OR OLD.text IS DISTINCT FROM NEW.text
    OR OLD.country_code IS DISTINCT FROM NEW.country_code
    OR OLD.created_at IS DISTINCT FROM NEW.created_at
    OR OLD.chain_created_at IS DISTINCT FROM NEW.chain_created_at)
  EXECUTE FUNCTION posts_insight_changes();
CREATE TRIGGER posts_insight_delete AFTER DELETE ON posts
  FOR EACH ROW WHEN (OLD.repost_of_id IS NULL AND OLD.deleted_at IS NULL AND OLD.superseded_at IS NULL)
  EXECUTE FUNCTION posts_insight_changes();

-- An author who becomes hidden (protected, suspended, deactivated,
-- deleted) takes their counted posts out; one who becomes public again
-- brings them back. Deleting the user's row takes them out before the
-- posts go with it.
CREATE FUNCTION users_insight_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  was_public boolean := false;
  is_public  boolean := false;
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    was_public := OLD.protected_at IS NULL AND OLD.suspended_at IS NULL AND OLD.deactivated_at IS NULL AND OLD.deleted_at IS NULL;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    is_public := NEW.protected_at IS NULL AND NEW.suspended_at IS NULL AND NEW.deactivated_at IS NULL AND NEW.deleted_at IS NULL;
  END IF;
  IF was_public <> is_public THEN
    INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
    SELECT p.id, CASE WHEN is_public THEN 1 ELSE -1 END, COALESCE(p.chain_created_at, p.created_at), p.country_code, p.text
    FROM posts p
    WHERE p.author_id = OLD.id AND p.repost_of_id IS NULL AND p.deleted_at IS NULL AND p.superseded_at IS NULL
    ORDER BY p.id;
  END IF;
  IF TG_OP = 'DELETE' THEN
    RETURN OLD;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER users_insight_update AFTER UPDATE ON users
  FOR EACH ROW WHEN (OLD.protected_at IS DISTINCT FROM NEW.protected_at
    OR OLD.suspended_at IS DISTINCT FROM NEW.suspended_at
    OR OLD.deactivated_at IS DISTINCT FROM NEW.deactivated_at
    OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
  EXECUTE FUNCTION users_insight_changes();
CREATE TRIGGER users_insight_delete BEFORE DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION users_insight_changes();

-- Posts written before this migration count too.
INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
SELECT id, 1, posted_at, country_code, text FROM insight_counted_posts ORDER BY id;

-- Posts per term, country and hour: the counted posts whose text holds the
-- term (posttext.KeywordTerms), by the hour of posted_at. The term '' counts
-- every post of the bucket. country_code '' is unknown; every post is also
-- counted under the country '*' (worldwide), in this table and the next.
-- Each aggregate's primary key INCLUDEs its count, so that the reads of
-- keyword insights are index-only scans of a key range.
CREATE TABLE insight_term_hours (
  term         text NOT NULL,
  country_code text NOT NULL,
  hour         timestamptz NOT NULL,
  posts        integer NOT NULL,
  PRIMARY KEY (term, country_code, hour) INCLUDE (posts)
);

-- Co-occurrence of terms, per country and UTC day, over a sample of the
-- posts (one in AVIARY_INSIGHTS_PAIR_SAMPLE, chosen by a hash of the post
-- id): sampled posts whose text holds both term and co_term, among the
-- first pair-terms of each sampled post.
CREATE TABLE insight_term_pairs (
  term         text NOT NULL,
  country_code text NOT NULL,
  day          date NOT NULL,
  co_term      text NOT NULL,
  posts        integer NOT NULL,
  PRIMARY KEY (term, country_code, day, co_term) INCLUDE (posts)
);

-- The same sample's posts per term, country and UTC day (the term's
-- document frequency); the term '' counts the sampled posts.
CREATE TABLE insight_term_days (
  term         text NOT NULL,
  country_code text NOT NULL,
  day          date NOT NULL,
  posts        integer NOT NULL,
  PRIMARY KEY (term, country_code, day) INCLUDE (posts)
);

-- Every keyword insights query, for operators (`aviary admin insights
-- queries`).
CREATE TABLE insight_queries (
  id                bigserial PRIMARY KEY,
  app_id            bigint NOT NULL,
  user_id           bigint NOT NULL,
  account_id        text NOT NULL DEFAULT '',
  granularity       text NOT NULL,
  keywords          text[] NOT NULL,
  negative_keywords text[] NOT NULL,
  location          text NOT NULL DEFAULT '',
  start_time        timestamptz NOT NULL,
  end_time          timestamptz NOT NULL,
  buckets           integer NOT NULL,
  related_keywords  integer NOT NULL,
  total_volume      bigint NOT NULL,
  duration_ms       double precision NOT NULL,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX insight_queries_created ON insight_queries (created_at DESC);
