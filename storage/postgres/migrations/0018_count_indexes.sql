-- Indexes for counts of operators that match a large share of a window
-- (docs/search.md, "Plans and indexes"). A count reads each matching post's
-- time and visibility; these partial indexes hold exactly the visible
-- versions (live, latest) that match, keyed by created_at, with the columns
-- the rest of the count's condition reads (the author, for the users
-- semi-join; repost_of_id, for the repost's-original probe), so a count of
-- the window is an index-only scan of its matches instead of a read of
-- every post of the window. Index-only scans skip the heap only on pages
-- the visibility map marks all-visible: recently updated pages (likes) are
-- still read from the heap, so results stay exact either way.

-- has:media (cardinality(p.media_ids) > 0, as posts_search.go writes it).
CREATE INDEX posts_count_media ON posts (created_at) INCLUDE (author_id, repost_of_id)
  WHERE cardinality(media_ids) > 0 AND deleted_at IS NULL AND superseded_at IS NULL;

-- min_likes:N for N >= 10 (p.like_count >= N implies the predicate). The
-- like count is a key column, not an included one, so that the planner
-- counts min_likes as an index condition and charges the rest of the
-- condition (the repost probe) only to the posts it keeps.
CREATE INDEX posts_count_likes ON posts (created_at, like_count) INCLUDE (author_id, repost_of_id)
  WHERE like_count >= 10 AND deleted_at IS NULL AND superseded_at IS NULL;
