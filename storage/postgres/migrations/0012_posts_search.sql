-- Posts, users, search and counts (docs/posts.md, docs/search.md).

-- Profiles: what GET /2/users shows. country_code is the profile country
-- (ISO 3166-1 alpha-2, '' unknown) that keyword insights fall back to.
ALTER TABLE users
  ADD COLUMN description       text NOT NULL DEFAULT '',
  ADD COLUMN location          text NOT NULL DEFAULT '',
  ADD COLUMN url               text NOT NULL DEFAULT '',
  ADD COLUMN profile_image_url text NOT NULL DEFAULT '',
  ADD COLUMN pinned_post_id    bigint,
  ADD COLUMN country_code      text NOT NULL DEFAULT '';

-- An app's access tier: programmatic replies of self-serve apps are
-- allowed only where the original author summoned the replier.
ALTER TABLE apps
  ADD COLUMN tier text NOT NULL DEFAULT 'self-serve' CHECK (tier IN ('self-serve', 'enterprise'));

-- A post's references, entities, language, counters and edit chain.
--   conversation_id   the conversation's first post (the post itself for a
--                     post that replies to nothing)
--   edit_root_id      the first version of an edited post (itself for an
--                     original); superseded_at is set when a newer version
--                     replaces it
--   repost_of_id      a repost ("retweet") of that post; its text is
--                     "RT @author: text", as on the platform
--   mentions, hashtags, cashtags, url_terms: lower-cased entity values for
--                     the search operators (@, #, $, url:), with GIN indexes
--   search_vector     the text's tokens for term and phrase search
ALTER TABLE posts
  ADD COLUMN lang                text NOT NULL DEFAULT 'und',
  ADD COLUMN source              text NOT NULL DEFAULT '',
  ADD COLUMN conversation_id     bigint,
  ADD COLUMN in_reply_to_post_id bigint,
  ADD COLUMN in_reply_to_user_id bigint,
  ADD COLUMN quote_of_id         bigint,
  ADD COLUMN repost_of_id        bigint,
  ADD COLUMN edit_root_id        bigint,
  ADD COLUMN superseded_at       timestamptz,
  ADD COLUMN place_id            text NOT NULL DEFAULT '',
  ADD COLUMN possibly_sensitive  boolean NOT NULL DEFAULT false,
  ADD COLUMN entities            jsonb NOT NULL DEFAULT '{}',
  ADD COLUMN mentions            text[] NOT NULL DEFAULT '{}',
  ADD COLUMN hashtags            text[] NOT NULL DEFAULT '{}',
  ADD COLUMN cashtags            text[] NOT NULL DEFAULT '{}',
  ADD COLUMN url_terms           text[] NOT NULL DEFAULT '{}',
  ADD COLUMN like_count          integer NOT NULL DEFAULT 0,
  ADD COLUMN repost_count        integer NOT NULL DEFAULT 0,
  ADD COLUMN reply_count         integer NOT NULL DEFAULT 0,
  ADD COLUMN quote_count         integer NOT NULL DEFAULT 0,
  ADD COLUMN search_vector       tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED;

UPDATE posts SET conversation_id = id, edit_root_id = id;
ALTER TABLE posts
  ALTER COLUMN conversation_id SET NOT NULL,
  ALTER COLUMN edit_root_id SET NOT NULL;

CREATE INDEX posts_search_vector ON posts USING gin (search_vector);
CREATE INDEX posts_mentions ON posts USING gin (mentions);
CREATE INDEX posts_hashtags ON posts USING gin (hashtags);
CREATE INDEX posts_cashtags ON posts USING gin (cashtags);
CREATE INDEX posts_url_terms ON posts USING gin (url_terms);
CREATE INDEX posts_created_at ON posts (created_at);
CREATE INDEX posts_conversation ON posts (conversation_id, id);
CREATE INDEX posts_in_reply_to_user ON posts (in_reply_to_user_id, id DESC) WHERE in_reply_to_user_id IS NOT NULL;
CREATE INDEX posts_edit_root ON posts (edit_root_id, id) ;
CREATE INDEX posts_like_count ON posts (like_count, id) WHERE like_count > 0;
-- One live repost of a post per user.
CREATE UNIQUE INDEX posts_one_repost ON posts (author_id, repost_of_id)
  WHERE repost_of_id IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX posts_reposts_of ON posts (repost_of_id) WHERE repost_of_id IS NOT NULL;
CREATE INDEX posts_quotes_of ON posts (quote_of_id) WHERE quote_of_id IS NOT NULL;

-- Likes: one per user and post.
CREATE TABLE likes (
  user_id    bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  post_id    bigint NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (user_id, post_id)
);
CREATE INDEX likes_post ON likes (post_id);
