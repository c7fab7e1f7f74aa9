-- News stories (docs/news.md): clusters of recent posts around spiking
-- terms, written by the news:refresh worker, read by GET /2/news/search and
-- GET /2/news/{id}.

-- The text a story is found by: its name and keywords (weight A) and its
-- summary (B), with the 'simple' configuration of posts.search_vector.
-- array_to_string is only STABLE because it is polymorphic; over text[] it
-- is immutable, which the generated column needs.
CREATE FUNCTION news_search_vector(name text, summary text, keywords text[]) RETURNS tsvector
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT setweight(to_tsvector('simple', name), 'A')
      || setweight(to_tsvector('simple', array_to_string(keywords, ' ')), 'A')
      || setweight(to_tsvector('simple', summary), 'B')
$$;

-- One story. lead_term is the spiking term (a posttext.KeywordTerms term:
-- word, "#tag", "$tag" or "@name") the story was last built around;
-- keywords are every term of the story, the lead first. A story updated in
-- the last 24 hours is refreshed in place (same id) when its lead term or
-- one of its keywords leads again, or its lead term joins a new lead
-- (storage/postgres.UpsertNewsStory). post_ids are the cluster posts shown
-- (cluster_posts_results: the most engaged first); posts counts the
-- lead term's posts of the last 24 hours when the story was refreshed.
CREATE TABLE news_stories (
  id            bigint PRIMARY KEY DEFAULT aviary_next_id(),
  lead_term     text NOT NULL,
  keywords      text[] NOT NULL DEFAULT '{}',
  name          text NOT NULL,
  summary       text NOT NULL DEFAULT '',
  hook          text NOT NULL DEFAULT '',
  category      text NOT NULL DEFAULT 'News',
  contexts      jsonb NOT NULL DEFAULT '{}',
  post_ids      bigint[] NOT NULL DEFAULT '{}',
  posts         integer NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (news_search_vector(name, summary, keywords)) STORED
);
CREATE INDEX news_stories_search ON news_stories USING gin (search_vector);
CREATE INDEX news_stories_updated ON news_stories (updated_at DESC, id DESC);
-- The refresh looks a story up by lead term, then by keyword, among the
-- recently updated ones.
CREATE INDEX news_stories_lead ON news_stories (lead_term, updated_at DESC);
CREATE INDEX news_stories_keywords ON news_stories USING gin (keywords);

-- Spike detection reads the last 26 hours of every term of
-- insight_term_hours (0016) worldwide (country '*'), whose primary key leads
-- with the term: without an index on the hour it would read the whole table
-- every minute. posts stays out of the index (no INCLUDE), so the applier's
-- counter updates remain HOT updates.
CREATE INDEX insight_term_hours_hour ON insight_term_hours (hour) WHERE country_code = '*';
