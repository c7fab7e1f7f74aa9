-- Indexes of post search and counts (docs/search.md, "Plans and indexes").

-- Time windows: posts are written in time order, so a block range index on
-- created_at is tiny and tells which pages hold a window. ANDed with the
-- bitmap of a selective index (a term's GIN entries, an author's posts),
-- it leaves only the matches inside the window to read, where the btree
-- posts_created_at would list every post of the window first. Ranges of
-- 32 pages keep the edges tight; autosummarize summarizes each range once
-- it is full instead of waiting for a VACUUM (unsummarized pages are
-- always read, so results stay right either way).
CREATE INDEX posts_created_at_brin ON posts USING brin (created_at)
  WITH (pages_per_range = 32, autosummarize = on);

-- SortRelevancy: the engagement score, then the id, of visible versions;
-- a page is read from the top of this index (backwards) while the other
-- conditions filter, and the keyset cursor (score, id) is an index bound.
-- The expression must stay the same as relevancyScore in
-- storage/postgres/posts_search.go.
CREATE INDEX posts_relevancy ON posts
  ((like_count::bigint + 2 * repost_count::bigint + reply_count::bigint + quote_count::bigint), id)
  WHERE deleted_at IS NULL AND superseded_at IS NULL;
