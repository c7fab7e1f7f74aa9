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

-- A post's country, fixed when it is written: its place's country, else
-- its author's profile country at that moment, else '' (unknown).
ALTER TABLE posts ADD COLUMN country_code text NOT NULL DEFAULT '';

CREATE FUNCTION posts_country() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.country_code := COALESCE(
    (SELECT pl.country_code FROM places pl WHERE pl.id = NEW.place_id),
    (SELECT NULLIF(u.country_code, '') FROM users u WHERE u.id = NEW.author_id),
    '');
  RETURN NEW;
END
$$;

CREATE TRIGGER posts_country BEFORE INSERT ON posts
  FOR EACH ROW WHEN (NEW.country_code = '' AND NEW.repost_of_id IS NULL)
  EXECUTE FUNCTION posts_country();

-- The change log: one row per post that starts (+1) or stops (-1) counting,
-- written in the transaction that changes the post, so nothing committed is
-- missed. A post counts while it is an original (not a repost), not deleted
-- and the latest version of its edit chain. posted_at is the creation time
-- of the chain's first version (an edit keeps its post in its hour); text
-- and country_code are the counted version's. Workers apply the rows to the
-- aggregates and delete them in one transaction.
CREATE TABLE insight_changes (
  seq          bigserial PRIMARY KEY,
  post_id      bigint NOT NULL,
  delta        smallint NOT NULL CHECK (delta IN (-1, 1)),
  posted_at    timestamptz NOT NULL,
  country_code text NOT NULL,
  text         text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);

CREATE FUNCTION insight_posted_at(root bigint, own_id bigint, created timestamptz) RETURNS timestamptz
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN root IS NULL OR root = own_id THEN created
    ELSE COALESCE((SELECT r.created_at FROM posts r WHERE r.id = root), created) END
$$;

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
  IF TG_OP = 'UPDATE' AND was AND counts THEN
    changed := OLD.text IS DISTINCT FROM NEW.text OR OLD.country_code IS DISTINCT FROM NEW.country_code
      OR OLD.created_at IS DISTINCT FROM NEW.created_at;
  END IF;
  IF was AND (NOT counts OR changed) THEN
    INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
    VALUES (OLD.id, -1, insight_posted_at(OLD.edit_root_id, OLD.id, OLD.created_at), OLD.country_code, OLD.text);
  END IF;
  IF counts AND (NOT was OR changed) THEN
    INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
    VALUES (NEW.id, 1, insight_posted_at(NEW.edit_root_id, NEW.id, NEW.created_at), NEW.country_code, NEW.text);
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
    OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION posts_insight_changes();
CREATE TRIGGER posts_insight_delete AFTER DELETE ON posts
  FOR EACH ROW WHEN (OLD.repost_of_id IS NULL AND OLD.deleted_at IS NULL AND OLD.superseded_at IS NULL)
  EXECUTE FUNCTION posts_insight_changes();

-- Posts written before this migration count too.
INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
SELECT p.id, 1, insight_posted_at(p.edit_root_id, p.id, p.created_at), p.country_code, p.text
FROM posts p
WHERE p.repost_of_id IS NULL AND p.deleted_at IS NULL AND p.superseded_at IS NULL
ORDER BY p.id;

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
