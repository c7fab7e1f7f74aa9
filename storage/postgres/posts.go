package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// Edit chains, counters and locks (docs/posts.md):
//
//   - A post's versions share edit_root_id, the first version's id: its edit
//     chain. A chain's lock is its root row's lock (FOR NO KEY UPDATE, see
//     lockChains): every change of a chain's versions, counters or deletion
//     holds it, so an edit never loses a concurrent like, and checks made
//     under it (live, latest) stay true until the commit. A transaction
//     that needs several chains locks them in one statement, in id order.
//   - A chain's counters (likes, reposts, replies, quotes) live on its
//     latest version (superseded_at NULL): an edit copies them to the new
//     version, and older versions keep the counts they had when they were
//     superseded. Like, Repost, replies and quotes of any version count on
//     the latest one; a user likes and reposts a chain at most once.
//   - Likes rows and reposts name the version that was the latest when they
//     were made. Replies and quotes name the version the caller named.
//   - DeletePost deletes every version of the chain at once, and the live
//     reposts of any of them.

// postColumns are the columns scanPost reads, in its order, from a query
// that names the posts table p (FROM posts p, INSERT INTO posts AS p,
// UPDATE posts p). References read as 0 when NULL. The search terms
// (mentions, hashtags, cashtags, url_terms) are not read: they only serve
// the indexes, and every search page would decode four arrays per post
// for nothing (storage.Post.Terms is written, never read back).
const postColumns = `p.id, p.author_id, COALESCE(p.app_id, 0), p.text, p.paid_partnership, p.media_ids, p.lang, p.source,
	p.conversation_id, COALESCE(p.in_reply_to_post_id, 0), COALESCE(p.in_reply_to_user_id, 0), COALESCE(p.quote_of_id, 0),
	COALESCE(p.repost_of_id, 0), p.edit_root_id, p.superseded_at, p.place_id, p.possibly_sensitive, p.entities,
	p.like_count, p.repost_count, p.reply_count, p.quote_count,
	p.created_at, p.deleted_at, COALESCE(p.card_uri, '')`

// editHistoryColumn is every version id of p's edit chain, oldest first
// (an index-only scan of posts_edit_root).
const editHistoryColumn = `ARRAY(SELECT e.id FROM posts e WHERE e.edit_root_id = p.edit_root_id ORDER BY e.id)`

// postHistoryColumns are postColumns and the edit history, which
// scanPostHistory reads. The history is read at the statement's snapshot:
// a RETURNING clause does not see rows its own statement inserted.
const postHistoryColumns = postColumns + `, ` + editHistoryColumn

// postFields are the scan destinations of postColumns, in order, so a
// query may read more columns after them (see scanPostHistory).
func postFields(p *storage.Post) []any {
	return []any{&p.ID, &p.AuthorID, &p.AppID, &p.Text, &p.PaidPartnership, &p.MediaIDs, &p.Lang, &p.Source,
		&p.ConversationID, &p.InReplyToPostID, &p.InReplyToUserID, &p.QuoteOfID,
		&p.RepostOfID, &p.EditRootID, &p.SupersededAt, &p.PlaceID, &p.PossiblySensitive, &p.Entities,
		&p.Metrics.Likes, &p.Metrics.Reposts, &p.Metrics.Replies, &p.Metrics.Quotes,
		&p.CreatedAt, &p.DeletedAt, &p.CardURI}
}

// scanPost reads postColumns; EditHistory stays nil.
func scanPost(row pgx.Row) (storage.Post, error) {
	var p storage.Post
	err := row.Scan(postFields(&p)...)
	return p, err
}

// scanPostHistory reads postHistoryColumns.
func scanPostHistory(row pgx.Row) (storage.Post, error) {
	var p storage.Post
	err := row.Scan(append(postFields(&p), &p.EditHistory)...)
	return p, err
}

// postScanner reads many rows of postHistoryColumns, then extra columns,
// through one destination list: a page of 100 posts does not build 100
// lists of 25 pointers (and a post on the heap for each to point into).
type postScanner struct {
	post storage.Post
	dest []any
}

func newPostScanner(extra ...any) *postScanner {
	s := &postScanner{}
	s.dest = append(append(postFields(&s.post), &s.post.EditHistory), extra...)
	return s
}

// scan reads row into a fresh post (every field zeroed first, so nothing
// of the previous row is kept or shared) and the extra destinations.
func (s *postScanner) scan(row pgx.Row) (storage.Post, error) {
	s.post = storage.Post{}
	err := row.Scan(s.dest...)
	return s.post, err
}

// inTx runs f in a transaction and wraps its error with op.
func (db *DB) inTx(ctx context.Context, op string, f func(tx pgx.Tx) error) error {
	return wrap(op, db.beginFunc(ctx, f))
}

// nextID allocates a core id on tx's connection.
func nextID(ctx context.Context, tx pgx.Tx) (int64, error) {
	var id int64
	err := tx.QueryRow(ctx, `SELECT aviary_next_id()`).Scan(&id)
	return id, err
}

// lockChains takes the locks of the edit chains rooted at roots (zeros
// skipped): their root rows, in id order, in one statement, so two
// transactions that lock several chains never wait for each other in a
// cycle. Afterwards each statement of the transaction sees what the
// previous holders committed (READ COMMITTED).
func lockChains(ctx context.Context, tx pgx.Tx, roots ...int64) error {
	list := make([]int64, 0, len(roots))
	for _, r := range roots {
		if r != 0 {
			list = append(list, r)
		}
	}
	if len(list) == 0 {
		return nil
	}
	slices.Sort(list)
	list = slices.Compact(list)
	_, err := tx.Exec(ctx, `SELECT id FROM posts WHERE id = ANY($1) ORDER BY id FOR NO KEY UPDATE`, list)
	if err != nil {
		return fmt.Errorf("lock posts %v: %w", list, err)
	}
	return nil
}

// postRef is what a change needs of a post it acts on or refers to.
type postRef struct {
	id, root, author, repostOf, conversation int64
	deleted                                  bool
}

// loadRef reads post id's chain, author and state; storage.ErrNotFound if
// there is no such post. Read before lockChains, only root, author and
// the references are settled (they never change).
func loadRef(ctx context.Context, tx pgx.Tx, id int64) (postRef, error) {
	r := postRef{id: id}
	err := tx.QueryRow(ctx, `SELECT edit_root_id, author_id, COALESCE(repost_of_id, 0), conversation_id, deleted_at IS NOT NULL
		FROM posts WHERE id = $1`, id).Scan(&r.root, &r.author, &r.repostOf, &r.conversation, &r.deleted)
	if err != nil {
		return r, fmt.Errorf("post %d: %w", id, translate(err))
	}
	return r, nil
}

// loadOriginal is loadRef of id, or of the post it reposts when id is a
// repost (acting on a repost acts on its original).
func loadOriginal(ctx context.Context, tx pgx.Tx, id int64) (postRef, error) {
	r, err := loadRef(ctx, tx, id)
	if err != nil || r.repostOf == 0 {
		return r, err
	}
	return loadRef(ctx, tx, r.repostOf)
}

// lockLive locks the chain of r and checks, under the lock, that post
// r.id is still live (storage.ErrNotFound otherwise).
func lockLive(ctx context.Context, tx pgx.Tx, r postRef) error {
	if err := lockChains(ctx, tx, r.root); err != nil {
		return err
	}
	now, err := loadRef(ctx, tx, r.id)
	if err == nil && now.deleted {
		err = fmt.Errorf("post %d is deleted: %w", r.id, storage.ErrNotFound)
	}
	return err
}

// Counter columns of posts.
const (
	likeCount   = "like_count"
	repostCount = "repost_count"
	replyCount  = "reply_count"
	quoteCount  = "quote_count"
)

// bump adds delta to counter (one of the counter columns) of the latest
// version of the chain rooted at root; the caller holds the chain's lock.
// A count never goes below 0.
func bump(ctx context.Context, tx pgx.Tx, counter string, root int64, delta int64) error {
	if root == 0 || delta == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE posts SET `+counter+` = GREATEST(`+counter+` + $2, 0)
		WHERE edit_root_id = $1 AND superseded_at IS NULL`, root, delta)
	if err != nil {
		return fmt.Errorf("count %s of post %d: %w", counter, root, err)
	}
	return nil
}

// insertPost inserts p as it is: every column, its id, conversation and
// edit root included (the caller's), counters from p.Metrics, created_at
// p.CreatedAt or now() when zero, the search terms terms (p.Terms is not
// read, nor returned: see postColumns). Lang "" is stored as "und".
func insertPost(ctx context.Context, tx pgx.Tx, p storage.Post, terms storage.PostTerms) (storage.Post, error) {
	var created *time.Time
	if !p.CreatedAt.IsZero() {
		created = &p.CreatedAt
	}
	terms = storage.PostTerms{Mentions: nonNilText(terms.Mentions), Hashtags: nonNilText(terms.Hashtags),
		Cashtags: nonNilText(terms.Cashtags), URLTerms: nonNilText(terms.URLTerms)}
	return scanPost(tx.QueryRow(ctx, `INSERT INTO posts AS p (id, author_id, app_id, text, paid_partnership, media_ids,
			lang, source, conversation_id, in_reply_to_post_id, in_reply_to_user_id, quote_of_id, repost_of_id,
			edit_root_id, place_id, possibly_sensitive, entities, mentions, hashtags, cashtags, url_terms,
			like_count, repost_count, reply_count, quote_count, created_at, card_uri)
		VALUES ($1, $2, NULLIF($3::bigint, 0), $4, $5, $6,
			$7, $8, $9, NULLIF($10::bigint, 0), NULLIF($11::bigint, 0), NULLIF($12::bigint, 0), NULLIF($13::bigint, 0),
			$14, $15, $16, $17, $18, $19, $20, $21,
			$22, $23, $24, $25, COALESCE($26::timestamptz, now()), NULLIF($27, ''))
		RETURNING `+postColumns,
		p.ID, p.AuthorID, p.AppID, p.Text, p.PaidPartnership, nonNil(p.MediaIDs),
		cmp.Or(p.Lang, "und"), p.Source, p.ConversationID, p.InReplyToPostID, p.InReplyToUserID, p.QuoteOfID, p.RepostOfID,
		p.EditRootID, p.PlaceID, p.PossiblySensitive, p.Entities, terms.Mentions, terms.Hashtags, terms.Cashtags, terms.URLTerms,
		p.Metrics.Likes, p.Metrics.Reposts, p.Metrics.Replies, p.Metrics.Quotes, created, p.CardURI))
}

// termsFor are the search terms of a new post or version: p.Terms, or
// when they are all empty the ones derived from p.Entities.
func termsFor(p storage.Post) storage.PostTerms {
	if p.Terms.Empty() {
		return termsOf(p.Entities)
	}
	return p.Terms
}

// termsOf derives the search terms of entities as posttext defines them
// (posttext.Tags: NFC-normalized, lower-cased usernames and tags), the
// forms the search operators compile their values to, and the url: terms
// of the links' expanded URLs.
func termsOf(e storage.Entities) storage.PostTerms {
	var t storage.PostTerms
	t.Mentions, t.Hashtags, t.Cashtags = posttext.Tags(e)
	urls := make([]string, 0, len(e.URLs))
	for _, u := range e.URLs {
		urls = append(urls, cmp.Or(u.ExpandedURL, u.URL))
	}
	t.URLTerms = posttext.URLTerms(urls)
	return t
}

// repostTerms are the terms of a repost's event: the mention of the
// reposted author (its "RT @user:" text) and the reposted post's own
// entities, as a retweet carries the original's on the platform.
func repostTerms(repost, of storage.Post) storage.PostTerms {
	t := termsOf(of.Entities)
	for _, m := range termsOf(repost.Entities).Mentions {
		if !slices.Contains(t.Mentions, m) {
			t.Mentions = append([]string{m}, t.Mentions...)
		}
	}
	return t
}

func nonNilText(list []string) []string {
	if list == nil {
		return []string{}
	}
	return list
}

// CreatePost stores a new post and returns it with its id, time and edit
// history. p carries the post's columns: text, media, lang ("" is "und"),
// source, place, possibly_sensitive, entities and their Terms (derived
// from Entities when all empty), and its references: InReplyToPostID, a
// live post (the reply's conversation is the parent's, InReplyToUserID
// its author, whatever p says) and QuoteOfID, a live post. A parent or
// quoted post that does not exist or is deleted is storage.ErrNotFound. Its
// chain's reply or quote count rises in the same transaction. The new
// post is its own edit root, and its own conversation unless a reply.
// Reposts are made with Repost; p.RepostOfID must be 0.
func (db *DB) CreatePost(ctx context.Context, p storage.Post) (storage.Post, error) {
	op := fmt.Sprintf("create post for user %d", p.AuthorID)
	if p.RepostOfID != 0 {
		return storage.Post{}, fmt.Errorf("%s: a repost is made with Repost, not CreatePost", op)
	}
	var out storage.Post
	err := db.inTx(ctx, op, func(tx pgx.Tx) error {
		var err error
		out, err = createPost(ctx, tx, p)
		return err
	})
	if err != nil {
		return storage.Post{}, err
	}
	out.EditHistory = []int64{out.ID}
	return out, nil
}

// createPost is CreatePost in tx: the post, its counters and its
// post.create event.
func createPost(ctx context.Context, tx pgx.Tx, p storage.Post) (storage.Post, error) {
	var parent, quoted postRef
	var err error
	if p.InReplyToPostID != 0 {
		if parent, err = loadRef(ctx, tx, p.InReplyToPostID); err != nil {
			return storage.Post{}, fmt.Errorf("reply to %w", err)
		}
	}
	if p.QuoteOfID != 0 {
		if quoted, err = loadRef(ctx, tx, p.QuoteOfID); err != nil {
			return storage.Post{}, fmt.Errorf("quote %w", err)
		}
	}
	if err := lockChains(ctx, tx, parent.root, quoted.root); err != nil {
		return storage.Post{}, err
	}
	id, err := nextID(ctx, tx)
	if err != nil {
		return storage.Post{}, err
	}
	p.ID, p.ConversationID, p.EditRootID, p.InReplyToUserID = id, id, id, 0
	p.Metrics, p.CreatedAt = storage.PostMetrics{}, time.Time{}
	if p.InReplyToPostID != 0 {
		if parent, err = loadRef(ctx, tx, p.InReplyToPostID); err == nil && parent.deleted {
			err = fmt.Errorf("post %d is deleted: %w", parent.id, storage.ErrNotFound)
		}
		if err != nil {
			return storage.Post{}, fmt.Errorf("reply to %w", err)
		}
		p.ConversationID, p.InReplyToUserID = parent.conversation, parent.author
	}
	if p.QuoteOfID != 0 {
		if quoted, err = loadRef(ctx, tx, p.QuoteOfID); err == nil && quoted.deleted {
			err = fmt.Errorf("post %d is deleted: %w", quoted.id, storage.ErrNotFound)
		}
		if err != nil {
			return storage.Post{}, fmt.Errorf("quote %w", err)
		}
	}
	terms := termsFor(p)
	out, err := insertPost(ctx, tx, p, terms)
	if err != nil {
		return storage.Post{}, err
	}
	if err := bump(ctx, tx, replyCount, parent.root, 1); err != nil {
		return storage.Post{}, err
	}
	if err := bump(ctx, tx, quoteCount, quoted.root, 1); err != nil {
		return storage.Post{}, err
	}
	ev, err := postCreated(ctx, tx, out, terms, 0)
	if err != nil {
		return storage.Post{}, err
	}
	return out, appendEvents(ctx, tx, ev)
}

// EditPost stores p as the next version of post previousID at time now
// (the new version's created_at and the previous one's superseded_at).
// Under the chain's lock and a row lock of the previous version, that
// version must be live, the latest, p.AuthorID's, not a repost, its chain's
// first version created less than storage.EditWindow before now, and the
// chain edited fewer than storage.MaxEdits times; otherwise the error is a
// storage.EditRefusal (an ErrConflict) naming the reason. An unknown
// previousID is storage.ErrNotFound.
//
// The new version takes from p its text, media, lang, source, app,
// entities and terms, paid_partnership and possibly_sensitive; from the
// previous version its author, conversation, reply and quote references and
// place (an edit changes the text and media only), and the chain's counters
// (likes stay with the chain: the previous versions' likes rows stay where
// they are and count on the new version). It returns the new version with
// its edit history.
func (db *DB) EditPost(ctx context.Context, previousID int64, p storage.Post, now time.Time) (storage.Post, error) {
	var out storage.Post
	err := db.inTx(ctx, fmt.Sprintf("edit post %d", previousID), func(tx pgx.Tx) error {
		ref, err := loadRef(ctx, tx, previousID)
		if err != nil {
			return err
		}
		if err := lockChains(ctx, tx, ref.root); err != nil {
			return err
		}
		prev, err := scanPost(tx.QueryRow(ctx, `SELECT `+postColumns+` FROM posts p WHERE p.id = $1 FOR NO KEY UPDATE`, previousID))
		if err != nil {
			return fmt.Errorf("lock post %d: %w", previousID, err)
		}
		var rootCreated time.Time
		var versions int
		err = tx.QueryRow(ctx, `SELECT created_at, (SELECT count(*) FROM posts WHERE edit_root_id = $1) FROM posts WHERE id = $1`,
			prev.EditRootID).Scan(&rootCreated, &versions)
		if err != nil {
			return fmt.Errorf("load edit chain %d: %w", prev.EditRootID, err)
		}
		switch {
		case prev.DeletedAt != nil:
			return storage.EditRefusedDeleted
		case prev.AuthorID != p.AuthorID:
			return storage.EditRefusedAuthor
		case prev.RepostOfID != 0:
			return storage.EditRefusedRepost
		case prev.SupersededAt != nil:
			return storage.EditRefusedNotLatest
		case !now.Before(rootCreated.Add(storage.EditWindow)):
			return storage.EditRefusedWindow
		case versions-1 >= storage.MaxEdits:
			return storage.EditRefusedLimit
		}
		id, err := nextID(ctx, tx)
		if err != nil {
			return err
		}
		next := storage.Post{ID: id, AuthorID: prev.AuthorID, AppID: p.AppID, Text: p.Text, PaidPartnership: p.PaidPartnership,
			MediaIDs: p.MediaIDs, Lang: p.Lang, Source: p.Source, ConversationID: prev.ConversationID,
			InReplyToPostID: prev.InReplyToPostID, InReplyToUserID: prev.InReplyToUserID, QuoteOfID: prev.QuoteOfID,
			EditRootID: prev.EditRootID, PlaceID: prev.PlaceID, CardURI: prev.CardURI, PossiblySensitive: p.PossiblySensitive,
			Entities: p.Entities, Terms: p.Terms, Metrics: prev.Metrics, CreatedAt: now}
		terms := termsFor(next)
		if _, err := insertPost(ctx, tx, next, terms); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE posts SET superseded_at = $2 WHERE id = $1`, prev.ID, now); err != nil {
			return fmt.Errorf("supersede post %d: %w", prev.ID, err)
		}
		if err := copyAdsFields(ctx, tx, prev, next); err != nil {
			return err
		}
		// A repost shows the chain's text: its live reposts show the edit.
		if _, err := tx.Exec(ctx, `UPDATE posts r SET text = 'RT @' || u.username || ': ' || $2
			FROM users u WHERE u.id = $3 AND r.deleted_at IS NULL
			AND r.repost_of_id IN (SELECT id FROM posts WHERE edit_root_id = $1)`, prev.EditRootID, p.Text, prev.AuthorID); err != nil {
			return fmt.Errorf("update reposts of post %d: %w", prev.EditRootID, err)
		}
		if out, err = scanPostHistory(tx.QueryRow(ctx, `SELECT `+postHistoryColumns+` FROM posts p WHERE p.id = $1`, id)); err != nil {
			return err
		}
		ev, err := postCreated(ctx, tx, out, terms, prev.ID)
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, ev)
	})
	return out, err
}

// Repost reposts post postID for userID with app appID (0: none) and
// returns the repost. Reposting a repost reposts its original; the
// original must be live (storage.ErrNotFound otherwise). It is idempotent:
// a live repost of any version of the original's chain by userID is
// returned as it is. The repost names the chain's latest version: its text
// is "RT @<author>: <that version's text>", its entities one mention of the
// author (code points [3, 4+len(username))), its lang and
// possibly_sensitive copied, its source the app's name; it has no search
// terms (the entity operators, like keywords, match the original, not its
// reposts: docs/search.md). The chain's repost count
// rises. Concurrent calls of one user serialize on the chain's lock; the
// unique index posts_one_repost backs this up.
func (db *DB) Repost(ctx context.Context, userID, appID, postID int64) (storage.Post, error) {
	var out storage.Post
	err := db.inTx(ctx, fmt.Sprintf("repost post %d for user %d", postID, userID), func(tx pgx.Tx) error {
		ref, err := loadOriginal(ctx, tx, postID)
		if err != nil {
			return err
		}
		if err := lockLive(ctx, tx, ref); err != nil {
			return err
		}
		existing, err := scanPostHistory(tx.QueryRow(ctx, `SELECT `+postHistoryColumns+` FROM posts p
			WHERE p.author_id = $1 AND p.deleted_at IS NULL
			  AND p.repost_of_id IN (SELECT e.id FROM posts e WHERE e.edit_root_id = $2) LIMIT 1`, userID, ref.root))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("load repost: %w", err)
		}
		var latest storage.Post
		var username, source string
		err = tx.QueryRow(ctx, `SELECT `+postColumns+`, u.username, COALESCE((SELECT a.name FROM apps a WHERE a.id = $2), '')
			FROM posts p JOIN users u ON u.id = p.author_id WHERE p.edit_root_id = $1 AND p.superseded_at IS NULL`,
			ref.root, appID).Scan(append(postFields(&latest), &username, &source)...)
		if err != nil {
			return fmt.Errorf("load latest version of post %d: %w", ref.root, err)
		}
		id, err := nextID(ctx, tx)
		if err != nil {
			return err
		}
		repost := storage.Post{ID: id, AuthorID: userID, AppID: appID, Text: "RT @" + username + ": " + latest.Text,
			Lang: latest.Lang, Source: source, ConversationID: id, RepostOfID: latest.ID, EditRootID: id,
			PossiblySensitive: latest.PossiblySensitive,
			Entities: storage.Entities{Mentions: []storage.MentionEntity{{Start: 3, End: 4 + utf8.RuneCountInString(username),
				Username: username, UserID: latest.AuthorID}}}}
		if out, err = insertPost(ctx, tx, repost, storage.PostTerms{}); err != nil {
			return err
		}
		out.EditHistory = []int64{out.ID}
		if err := bump(ctx, tx, repostCount, ref.root, 1); err != nil {
			return err
		}
		// The event carries the repost's mention of the original author
		// and the reposted post's entities and media (the stream's
		// operators see a repost as the platform's see a retweet), though
		// search does not index them.
		shown := out
		shown.MediaIDs = latest.MediaIDs
		ev, err := postCreated(ctx, tx, shown, repostTerms(out, latest), 0)
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, ev)
	})
	return out, err
}

// Unrepost deletes (soft, now) userID's live repost of post postID (of any
// version of its chain; postID may be a repost, which stands for its
// original) and lowers the chain's repost count. It reports false when
// there was no such repost, or no such post.
func (db *DB) Unrepost(ctx context.Context, userID, postID int64) (bool, error) {
	return db.undo(ctx, fmt.Sprintf("undo repost of post %d by user %d", postID, userID), userID, postID, repostCount,
		`UPDATE posts SET deleted_at = now() WHERE author_id = $1 AND deleted_at IS NULL
			AND repost_of_id IN (SELECT e.id FROM posts e WHERE e.edit_root_id = $2)
			RETURNING id, author_id, deleted_at`, true)
}

// undo runs sql (with $1 the user, $2 the chain's first version) under the
// lock of postID's chain and lowers the chain's counter by the rows it
// changed; it reports whether there were any (false, too, for an unknown
// post). With deletes, sql deletes posts RETURNING id, author_id,
// deleted_at, and their post.delete events are appended.
func (db *DB) undo(ctx context.Context, op string, userID, postID int64, counter, sql string, deletes bool) (bool, error) {
	var done bool
	err := db.inTx(ctx, op, func(tx pgx.Tx) error {
		ref, err := loadOriginal(ctx, tx, postID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := lockChains(ctx, tx, ref.root); err != nil {
			return err
		}
		if !deletes {
			tag, err := tx.Exec(ctx, sql, userID, ref.root)
			if err != nil {
				return err
			}
			done = tag.RowsAffected() > 0
			return bump(ctx, tx, counter, ref.root, -tag.RowsAffected())
		}
		gone, err := collectDeleted(tx.Query(ctx, sql, userID, ref.root))
		if err != nil {
			return err
		}
		done = len(gone) > 0
		if err := bump(ctx, tx, counter, ref.root, -int64(len(gone))); err != nil {
			return err
		}
		return appendEvents(ctx, tx, postsDeleted(0, userID, gone)...)
	})
	return done, err
}

// Like records that userID likes post postID (a repost stands for its
// original), which must be live (storage.ErrNotFound otherwise), and raises
// the chain's like count. It reports whether it recorded a like: false
// when userID already likes a version of the chain. The likes row names
// the chain's latest version.
func (db *DB) Like(ctx context.Context, userID, postID int64) (bool, error) {
	return db.LikeWith(ctx, 0, userID, postID)
}

// LikeWith is Like made through app appID: its like.create event names
// the app (GET /_aviary/events lists an app's events).
func (db *DB) LikeWith(ctx context.Context, appID, userID, postID int64) (bool, error) {
	var liked bool
	err := db.inTx(ctx, fmt.Sprintf("like post %d for user %d", postID, userID), func(tx pgx.Tx) error {
		ref, err := loadOriginal(ctx, tx, postID)
		if err != nil {
			return err
		}
		if err := lockLive(ctx, tx, ref); err != nil {
			return err
		}
		var ev events.Like
		err = tx.QueryRow(ctx, `WITH ins AS (INSERT INTO likes (user_id, post_id)
			SELECT $1::bigint, p.id FROM posts p WHERE p.edit_root_id = $2::bigint AND p.superseded_at IS NULL
			  AND NOT EXISTS (SELECT 1 FROM posts e JOIN likes l ON l.post_id = e.id AND l.user_id = $1 WHERE e.edit_root_id = $2)
			ON CONFLICT DO NOTHING RETURNING post_id)
			SELECT p.id, p.author_id, p.created_at, clock_timestamp() FROM ins JOIN posts p ON p.id = ins.post_id`,
			userID, ref.root).Scan(&ev.PostID, &ev.PostAuthorID, &ev.PostCreatedAt, &ev.LikedAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // liked already
		}
		if err != nil {
			return err
		}
		liked, ev.UserID = true, userID
		if err := bump(ctx, tx, likeCount, ref.root, 1); err != nil {
			return err
		}
		return appendEvents(ctx, tx, newEvent{typ: events.LikeCreate, app: appID, user: userID, subject: ev.PostID, payload: ev})
	})
	return liked, err
}

// Unlike removes userID's like of post postID (of any version of its
// chain; a repost stands for its original) and lowers the chain's like
// count. It reports false when there was no such like, or no such post.
func (db *DB) Unlike(ctx context.Context, userID, postID int64) (bool, error) {
	return db.undo(ctx, fmt.Sprintf("unlike post %d for user %d", postID, userID), userID, postID, likeCount,
		`DELETE FROM likes l USING posts e WHERE l.user_id = $1 AND l.post_id = e.id AND e.edit_root_id = $2`, false)
}

// PostByID loads a post, including a deleted one, with its edit history.
func (db *DB) PostByID(ctx context.Context, id int64) (storage.Post, error) {
	p, err := scanPostHistory(db.pool.QueryRow(ctx, `SELECT `+postHistoryColumns+` FROM posts p WHERE p.id = $1`, id))
	return p, wrap(fmt.Sprintf("load post %d", id), err)
}

// PostsByIDs loads the posts among ids that exist, deleted ones included
// (callers filter), each with its edit history, in the order of their
// first place in ids; one query.
func (db *DB) PostsByIDs(ctx context.Context, ids []int64) ([]storage.Post, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT `+postHistoryColumns+` FROM posts p WHERE p.id = ANY($1)`, ids)
	if err != nil {
		return nil, wrap("query posts by ids", err)
	}
	sc := newPostScanner()
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.Post, error) { return sc.scan(row) })
	if err != nil {
		return nil, wrap("scan posts by ids", err)
	}
	place := make(map[int64]int, len(ids))
	for i, id := range ids {
		if _, ok := place[id]; !ok {
			place[id] = i
		}
	}
	slices.SortFunc(out, func(a, b storage.Post) int { return cmp.Compare(place[a.ID], place[b.ID]) })
	return out, nil
}

// DeletePost marks a live post deleted at time at, with every other live
// version of its edit chain, and returns it. A post already deleted yields
// storage.ErrNotFound. The live reposts of the chain (of any of its
// versions) are deleted at the same time, as on the platform: a repost
// copies its original's text, which must go with it. The chain's own
// counters stay as they were. When the post is a reply, a quote or a
// repost, the parent's reply count, the quoted post's quote count or the
// original's repost count goes down in the same transaction (on the latest
// version of that chain).
//
// Every change of a repost (Repost, Unrepost, DeletePost of the repost)
// holds its original's chain lock, which this holds too, so a repost made
// or undone concurrently is either deleted here or refused afterwards.
func (db *DB) DeletePost(ctx context.Context, id int64, at time.Time) (storage.Post, error) {
	var out storage.Post
	err := db.inTx(ctx, fmt.Sprintf("delete post %d", id), func(tx pgx.Tx) error {
		var root, parentRoot, quotedRoot, originalRoot, author int64
		err := tx.QueryRow(ctx, `SELECT p.edit_root_id, p.author_id,
				COALESCE((SELECT r.edit_root_id FROM posts r WHERE r.id = p.in_reply_to_post_id), 0),
				COALESCE((SELECT r.edit_root_id FROM posts r WHERE r.id = p.quote_of_id), 0),
				COALESCE((SELECT r.edit_root_id FROM posts r WHERE r.id = p.repost_of_id), 0)
			FROM posts p WHERE p.id = $1`, id).Scan(&root, &author, &parentRoot, &quotedRoot, &originalRoot)
		if err != nil {
			return err
		}
		if err := lockChains(ctx, tx, root, parentRoot, quotedRoot, originalRoot); err != nil {
			return err
		}
		versions, err := collectDeleted(tx.Query(ctx, `UPDATE posts SET deleted_at = $2
			WHERE edit_root_id = $1 AND deleted_at IS NULL
			  AND EXISTS (SELECT 1 FROM posts t WHERE t.id = $3 AND t.deleted_at IS NULL)
			RETURNING id, author_id, deleted_at`, root, at, id))
		if err != nil {
			return err
		}
		if len(versions) == 0 {
			return storage.ErrNotFound
		}
		// The chain's reposts (posts_reposts_of), by anyone.
		reposts, err := collectDeleted(tx.Query(ctx, `UPDATE posts SET deleted_at = $2
			WHERE deleted_at IS NULL AND repost_of_id IN (SELECT e.id FROM posts e WHERE e.edit_root_id = $1)
			RETURNING id, author_id, deleted_at`, root, at))
		if err != nil {
			return fmt.Errorf("delete reposts of post %d: %w", root, err)
		}
		for _, c := range []struct {
			counter string
			root    int64
		}{{replyCount, parentRoot}, {quoteCount, quotedRoot}, {repostCount, originalRoot}} {
			if err := bump(ctx, tx, c.counter, c.root, -1); err != nil {
				return err
			}
		}
		if out, err = scanPostHistory(tx.QueryRow(ctx, `SELECT `+postHistoryColumns+` FROM posts p WHERE p.id = $1`, id)); err != nil {
			return err
		}
		slices.SortFunc(versions, func(a, b deletedPost) int { return cmp.Compare(a.id, b.id) })
		slices.SortFunc(reposts, func(a, b deletedPost) int { return cmp.Compare(a.id, b.id) })
		return appendEvents(ctx, tx, postsDeleted(0, author, append(versions, reposts...))...)
	})
	return out, err
}

// PostStatuses returns what compliance needs for each known post id (with
// its author); ids that never existed are absent from the result.
func (db *DB) PostStatuses(ctx context.Context, postIDs []int64) ([]storage.PostStatus, error) {
	rows, err := db.pool.Query(ctx, `SELECT p.id, p.created_at, p.deleted_at, `+userStateColumns+`
		FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ANY($1)`, postIDs)
	if err != nil {
		return nil, wrap("query post statuses", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.PostStatus, error) {
		var s storage.PostStatus
		u := &s.Author
		err := row.Scan(&s.ID, &s.CreatedAt, &s.DeletedAt,
			&u.ID, &u.Username, &u.Name, &u.CreatedAt, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt)
		return s, err
	})
	return out, wrap("scan post statuses", err)
}

// PostsNeedingAction is PostStatuses narrowed to what a compliance job
// writes: only the known posts that need action (the post or its author
// deleted, the author suspended, deactivated or protected), with only the
// columns the check reads (Author carries its id and state times, not its
// username or name). Most ids of a job need no action, so filtering in the
// query spares sending, decoding and discarding their rows.
func (db *DB) PostsNeedingAction(ctx context.Context, postIDs []int64) ([]storage.PostStatus, error) {
	rows, err := db.pool.Query(ctx, `SELECT p.id, p.created_at, p.deleted_at, p.author_id,
		u.protected_at, u.suspended_at, u.deactivated_at, u.deleted_at
		FROM posts p JOIN users u ON u.id = p.author_id WHERE p.id = ANY($1)
		AND (p.deleted_at IS NOT NULL OR u.deleted_at IS NOT NULL OR u.suspended_at IS NOT NULL
		     OR u.deactivated_at IS NOT NULL OR u.protected_at IS NOT NULL)`, postIDs)
	if err != nil {
		return nil, wrap("query posts needing action", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.PostStatus, error) {
		var s storage.PostStatus
		u := &s.Author
		err := row.Scan(&s.ID, &s.CreatedAt, &s.DeletedAt, &u.ID, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt)
		return s, err
	})
	return out, wrap("scan posts needing action", err)
}

// UsersNeedingAction is UsersByIDs narrowed to the known users that need
// compliance action (deleted, suspended, deactivated or protected), without
// their username and name.
func (db *DB) UsersNeedingAction(ctx context.Context, userIDs []int64) ([]storage.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT u.id, u.created_at, u.protected_at, u.suspended_at, u.deactivated_at, u.deleted_at
		FROM users u WHERE u.id = ANY($1) AND (u.deleted_at IS NOT NULL OR u.suspended_at IS NOT NULL
		     OR u.deactivated_at IS NOT NULL OR u.protected_at IS NOT NULL)`, userIDs)
	if err != nil {
		return nil, wrap("query users needing action", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.User, error) {
		var u storage.User
		err := row.Scan(&u.ID, &u.CreatedAt, &u.ProtectedAt, &u.SuspendedAt, &u.DeactivatedAt, &u.DeletedAt)
		return u, err
	})
	return out, wrap("scan users needing action", err)
}

// UsersByIDs returns the known users among ids.
func (db *DB) UsersByIDs(ctx context.Context, userIDs []int64) ([]storage.User, error) {
	rows, err := db.pool.Query(ctx, `SELECT `+userColumns+` FROM users u WHERE u.id = ANY($1)`, userIDs)
	if err != nil {
		return nil, wrap("query users", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.User, error) { return scanUser(row) })
	return out, wrap("scan users", err)
}
