-- Users' post counts (public_metrics.tweet_count: live posts, reposts
-- included, superseded versions of edited posts not; UserMetrics in
-- storage/postgres/identity.go). The count reads only this partial index,
-- which holds exactly the counted posts: an index-only scan of the user's
-- entries (no heap read where the visibility map is set), where
-- posts_author would read each of the user's posts, deleted and superseded
-- ones included, from the heap to check them. Its predicate must stay the
-- count's.
CREATE INDEX posts_author_live ON posts (author_id)
  WHERE deleted_at IS NULL AND superseded_at IS NULL;
