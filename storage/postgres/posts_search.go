package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/storage"
)

// relevancyScore is the engagement score SortRelevancy orders by
// (docs/search.md); migration 0013 indexes the same expression with the
// id, so that a page is read in index order. Widened to bigint: twice an
// integer counter does not fit an integer.
const relevancyScore = `(p.like_count::bigint + 2 * p.repost_count::bigint + p.reply_count::bigint + p.quote_count::bigint)`

// Search statements run as unnamed statements (pgx.QueryExecModeCacheDescribe:
// one round trip, the description cached): PostgreSQL then plans each with
// its values. A prepared statement would switch to a generic plan after a
// few runs, which knows neither how common a term is nor which partial
// index a value allows, and one plan cannot suit both a rare term (the GIN
// index, then sort) and a common one (newest first, filtering).

// SearchPosts returns one page of the live, latest-version posts that
// s.Query matches within s's windows, as s.ViewerID may see them, in
// s.SortOrder (docs/search.md). Next is set only when another page follows.
func (db *DB) SearchPosts(ctx context.Context, s storage.PostSearch) (storage.PostPage, error) {
	ctx = withBound(ctx, SearchCallTimeout)
	users, err := db.searchUsers(ctx, s.Query)
	if err != nil {
		return storage.PostPage{}, err
	}
	sql, args, err := searchPostsSQL(s, users)
	if err != nil {
		return storage.PostPage{}, err
	}
	rows, err := db.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
	if err != nil {
		return storage.PostPage{}, wrap("search posts", err)
	}
	defer rows.Close()
	// Room for a whole page up to 100 posts (max_results of recent
	// search), growing past it only for archive pages that fill.
	page := storage.PostPage{Posts: make([]storage.Post, 0, min(s.Limit, 100))}
	var score, lastScore int64
	sc := newPostScanner(&score)
	for rows.Next() {
		if len(page.Posts) == s.Limit {
			// The extra row: another page follows this one.
			last := page.Posts[len(page.Posts)-1]
			page.Next = &storage.PostCursor{ID: last.ID}
			if s.SortOrder == storage.SortRelevancy {
				page.Next.Score = lastScore
			}
			break
		}
		p, err := sc.scan(rows)
		if err != nil {
			return storage.PostPage{}, wrap("scan searched posts", err)
		}
		page.Posts = append(page.Posts, p)
		lastScore = score
	}
	rows.Close()
	return page, wrap("search posts", rows.Err())
}

// CountPosts counts the posts SearchPosts would find for c's query, per
// c.Granularity bucket of [c.Start, c.End): buckets are aligned in UTC,
// every one is present (zero counts included), and the first and last are
// clipped to the window.
func (db *DB) CountPosts(ctx context.Context, c storage.PostCount) ([]storage.CountBucket, error) {
	ctx = withBound(ctx, SearchCallTimeout)
	users, err := db.searchUsers(ctx, c.Query)
	if err != nil {
		return nil, err
	}
	sql, args, step, err := countPostsSQL(c, users)
	if err != nil {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
	if err != nil {
		return nil, wrap("count posts", err)
	}
	start, end := c.Start.UTC().Truncate(time.Microsecond), c.End.UTC().Truncate(time.Microsecond)
	buckets, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (storage.CountBucket, error) {
		var b storage.CountBucket
		err := row.Scan(&b.Start, &b.Count)
		b.Start = b.Start.UTC()
		b.End = b.Start.Add(step)
		b.Start = later(b.Start, start)
		if b.End.After(end) {
			b.End = end
		}
		return b, err
	})
	return buckets, wrap("count posts", err)
}

func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// granularities are the count buckets: their length as an interval for
// generate_series, and in Go (UTC days are 24 hours long).
var granularities = map[string]struct {
	interval string
	step     time.Duration
}{
	storage.GranularityMinute: {"1 minute", time.Minute},
	storage.GranularityHour:   {"1 hour", time.Hour},
	storage.GranularityDay:    {"1 day", 24 * time.Hour},
}

// errSearch marks a search the caller built wrong (not a query the
// language refuses: the API checks those with searchquery.Parse and
// CheckSearch, which also refuses the stream-only operators).
var errSearch = errors.New("invalid search")

// searchPostsSQL compiles s to one statement and its arguments. The rows
// are postHistoryColumns then the relevancy score (0 for SortRecency), Limit+1 of
// them at most.
func searchPostsSQL(s storage.PostSearch, users map[string]int64) (string, []any, error) {
	if s.Limit < 1 {
		return "", nil, fmt.Errorf("%w: limit %d is not positive", errSearch, s.Limit)
	}
	b := sqlBuilder{users: users}
	where, err := b.where(s.Query, s.ViewerID, s.Start, s.End, s.SinceID, s.UntilID)
	if err != nil {
		return "", nil, err
	}
	var sql strings.Builder
	switch s.SortOrder {
	case storage.SortRecency, "":
		sql.WriteString(`SELECT ` + postHistoryColumns + `, 0::bigint FROM posts p WHERE ` + where)
		if s.After != nil {
			sql.WriteString(` AND p.id < ` + b.arg(s.After.ID))
		}
		if pastWindow(s.End) {
			// "+ 0": not the primary key's order, so the planner cannot
			// walk it backwards from the newest post (see pastWindow).
			sql.WriteString(` ORDER BY p.id + 0 DESC`)
		} else {
			sql.WriteString(` ORDER BY p.id DESC`)
		}
	case storage.SortRelevancy:
		sql.WriteString(`SELECT ` + postHistoryColumns + `, ` + relevancyScore + ` FROM posts p WHERE ` + where)
		if s.After != nil {
			sql.WriteString(` AND (` + relevancyScore + `, p.id) < (` + b.arg(s.After.Score) + `::bigint, ` + b.arg(s.After.ID) + `::bigint)`)
		}
		sql.WriteString(` ORDER BY ` + relevancyScore + ` DESC, p.id DESC`)
	default:
		return "", nil, fmt.Errorf("%w: unknown sort order %q", errSearch, s.SortOrder)
	}
	sql.WriteString(` LIMIT ` + b.arg(s.Limit+1))
	return sql.String(), b.args, nil
}

// pastWindow reports whether a recency search's window ends more than an
// hour ago. The planner does not know that ids follow created_at: with
// ORDER BY id DESC LIMIT n it may read the primary key backwards from the
// newest post and filter on created_at, expecting the window's posts to be
// spread over the whole key, when they all lie below End, past every
// newer post. For such a window the statement orders by an expression of
// the id instead, which leaves the planner the window's own paths (the
// created_at indexes, a term's GIN entries) and a sort. A window that
// ends now (recent search: ten seconds ago) keeps the newest-first walk,
// which stops after n matches.
func pastWindow(end time.Time) bool {
	return !end.IsZero() && end.Before(time.Now().Add(-time.Hour))
}

// countPostsSQL compiles c to one statement, its arguments, and the length
// of a bucket. The rows are each bucket's aligned start (UTC) and count,
// in order.
func countPostsSQL(c storage.PostCount, users map[string]int64) (string, []any, time.Duration, error) {
	g, ok := granularities[c.Granularity]
	if !ok {
		return "", nil, 0, fmt.Errorf("%w: unknown granularity %q", errSearch, c.Granularity)
	}
	if c.Start.IsZero() || c.End.IsZero() || !c.End.After(c.Start) {
		return "", nil, 0, fmt.Errorf("%w: count window [%s, %s) is empty or open", errSearch,
			c.Start.Format(time.RFC3339Nano), c.End.Format(time.RFC3339Nano))
	}
	start, end := c.Start.UTC().Truncate(time.Microsecond), c.End.UTC().Truncate(time.Microsecond)
	b := sqlBuilder{users: users}
	where, err := b.where(c.Query, c.ViewerID, start, end, c.SinceID, c.UntilID)
	if err != nil {
		return "", nil, 0, err
	}
	field, step := b.arg(c.Granularity), b.arg(g.interval)
	sql := `WITH matched AS (
		SELECT date_trunc(` + field + `::text, p.created_at AT TIME ZONE 'UTC') AS bucket, count(*) AS n
		FROM posts p WHERE ` + where + ` GROUP BY 1)
	SELECT g AT TIME ZONE 'UTC', COALESCE(matched.n, 0)
	FROM generate_series(date_trunc(` + field + `::text, ` + b.arg(start) + `::timestamptz AT TIME ZONE 'UTC'),
		` + b.arg(end) + `::timestamptz AT TIME ZONE 'UTC' - interval '1 microsecond', ` + step + `::interval) AS g
	LEFT JOIN matched ON matched.bucket = g
	ORDER BY g`
	return sql, b.args, g.step, nil
}

// sqlBuilder collects the arguments of a statement: every value of a query
// is a bind parameter.
type sqlBuilder struct {
	args []any
	// users are the ids of the from: and to: usernames (lower-cased);
	// a name that is absent is no user's.
	users map[string]int64
}

func (b *sqlBuilder) arg(v any) string {
	b.args = append(b.args, v)
	return "$" + strconv.Itoa(len(b.args))
}

// where is the condition of a search or count: visible posts, the query and
// the windows.
func (b *sqlBuilder) where(q *searchquery.Query, viewerID int64, start, end time.Time, sinceID, untilID int64) (string, error) {
	if q == nil || q.Root == nil {
		return "", fmt.Errorf("%w: no query", errSearch)
	}
	match, err := b.node(q.Root)
	if err != nil {
		return "", err
	}
	viewer := b.arg(viewerID)
	conds := []string{
		`p.deleted_at IS NULL`,
		`p.superseded_at IS NULL`,
		// The author's state: a semi-join probing users by id.
		`EXISTS (SELECT 1 FROM users u WHERE u.id = p.author_id
			AND u.suspended_at IS NULL AND u.deactivated_at IS NULL AND u.deleted_at IS NULL
			AND (u.protected_at IS NULL OR u.id = ` + viewer + `))`,
	}
	if !excludesReposts(q.Root) {
		// A repost copies its original's text: it is found only while the
		// original is visible too (live, its author's state). Evaluated
		// for reposts only, as a probe of posts_pkey and users_pkey; OFFSET
		// 0 keeps the planner from turning it into a hashed subplan, which
		// would read every post. A query that finds no repost anyway leaves
		// it out: the planner charges it to every row and would otherwise
		// give up reading the newest posts first for keyword searches.
		conds = append(conds, `(p.repost_of_id IS NULL OR EXISTS (SELECT 1 FROM posts o JOIN users ou ON ou.id = o.author_id
			WHERE o.id = p.repost_of_id AND o.deleted_at IS NULL
			AND ou.suspended_at IS NULL AND ou.deactivated_at IS NULL AND ou.deleted_at IS NULL
			AND (ou.protected_at IS NULL OR ou.id = `+viewer+`) OFFSET 0))`)
	}
	conds = append(conds, match)
	if !start.IsZero() {
		conds = append(conds, `p.created_at >= `+b.arg(start))
	}
	if !end.IsZero() {
		conds = append(conds, `p.created_at < `+b.arg(end))
	}
	if sinceID != 0 {
		conds = append(conds, `p.id > `+b.arg(sinceID))
	}
	if untilID != 0 {
		conds = append(conds, `p.id < `+b.arg(untilID))
	}
	return strings.Join(conds, ` AND `), nil
}

// excludesReposts reports whether n never matches a repost: a keyword
// never does (docs/search.md), so neither does a conjunction holding one
// nor a disjunction of such.
func excludesReposts(n searchquery.Node) bool {
	switch n := n.(type) {
	case *searchquery.Term, *searchquery.Phrase:
		return true
	case *searchquery.And:
		return slices.ContainsFunc(n.Children, excludesReposts)
	case *searchquery.Or:
		return !slices.ContainsFunc(n.Children, func(c searchquery.Node) bool { return !excludesReposts(c) })
	}
	return false
}

// node compiles one node of the query tree to a condition on p. Every
// condition is true or false, never null, except to: (null for a post
// that replies to no one); Not reads null as false all the same.
func (b *sqlBuilder) node(n searchquery.Node) (string, error) {
	switch n := n.(type) {
	case *searchquery.And:
		return b.join(n.Children, " AND ")
	case *searchquery.Or:
		return b.or(n.Children)
	case *searchquery.Not:
		c, err := b.node(n.Child)
		if err != nil {
			return "", err
		}
		return "((" + c + ") IS NOT TRUE)", nil
	case *searchquery.Term:
		return b.text(n.Text), nil
	case *searchquery.Phrase:
		return b.text(n.Text), nil
	case *searchquery.Operator:
		return b.operator(n)
	}
	return "", fmt.Errorf("%w: unknown query node %T", errSearch, n)
}

func (b *sqlBuilder) join(children []searchquery.Node, sep string) (string, error) {
	parts := make([]string, len(children))
	for i, c := range children {
		s, err := b.node(c)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return "(" + strings.Join(parts, sep) + ")", nil
}

// or compiles alternatives. Its terms and phrases become one text match
// of their tsqueries joined with || (a tsquery OR): one GIN scan, and a
// selectivity the planner estimates as a whole, rather than a BitmapOr of
// estimates it tends to give up on for a scan of the window.
func (b *sqlBuilder) or(children []searchquery.Node) (string, error) {
	var texts, parts []string
	for _, c := range children {
		switch c := c.(type) {
		case *searchquery.Term:
			texts = append(texts, b.tsquery(c.Text))
		case *searchquery.Phrase:
			texts = append(texts, b.tsquery(c.Text))
		default:
			s, err := b.node(c)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
	}
	if len(texts) > 0 {
		parts = append(parts, "(p.repost_of_id IS NULL AND p.search_vector @@ ("+strings.Join(texts, " || ")+"))")
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

// text matches a term or phrase: its tokens, in order, among the text's
// (the same 'simple' configuration as p.search_vector). Text with no
// token (punctuation only) gives an empty tsquery, which matches nothing.
// A keyword never matches a repost.
func (b *sqlBuilder) text(s string) string {
	return "(p.repost_of_id IS NULL AND p.search_vector @@ " + b.tsquery(s) + ")"
}

func (b *sqlBuilder) tsquery(s string) string {
	return "phraseto_tsquery('simple', " + b.arg(s) + "::text)"
}

func (b *sqlBuilder) operator(op *searchquery.Operator) (string, error) {
	switch op.Name {
	case searchquery.OpFrom:
		return "p.author_id = " + b.userID(op.Value), nil
	case searchquery.OpTo:
		return "p.in_reply_to_user_id = " + b.userID(op.Value), nil
	case searchquery.OpMention, searchquery.OpHashtag, searchquery.OpCashtag:
		// The form posttext.Tags stores (NFC, lower case): the parser
		// lower-cases but cannot normalize.
		column := map[string]string{searchquery.OpMention: "p.mentions", searchquery.OpHashtag: "p.hashtags",
			searchquery.OpCashtag: "p.cashtags"}[op.Name]
		return column + " @> " + b.arg([]string{posttext.NormalizeTag(op.Value)}) + "::text[]", nil
	case searchquery.OpURL:
		u := posttext.NormalizeURL(op.Value)
		if u == "" || len(u) > posttext.MaxURLTermBytes {
			// No post has this term (URLTerms leaves out longer ones).
			return "false", nil
		}
		return "p.url_terms @> " + b.arg([]string{u}) + "::text[]", nil
	case searchquery.OpLang:
		return "p.lang = " + b.arg(op.Value) + "::text", nil
	case searchquery.OpConversationID:
		return "p.conversation_id = " + b.arg(op.Number) + "::bigint", nil
	case searchquery.OpIs:
		switch op.Value {
		case searchquery.IsReply:
			return "p.in_reply_to_post_id IS NOT NULL", nil
		case searchquery.IsQuote:
			return "p.quote_of_id IS NOT NULL", nil
		case searchquery.IsRetweet:
			return "p.repost_of_id IS NOT NULL", nil
		}
	case searchquery.OpHas:
		switch op.Value {
		case searchquery.HasMedia:
			return "cardinality(p.media_ids) > 0", nil
		case searchquery.HasLinks:
			return "cardinality(p.url_terms) > 0", nil
		case searchquery.HasMentions:
			return "cardinality(p.mentions) > 0", nil
		}
	case searchquery.OpMinLikes:
		return "p.like_count >= " + b.arg(op.Number) + "::bigint", nil
	case searchquery.OpMinReplies:
		return "p.reply_count >= " + b.arg(op.Number) + "::bigint", nil
	case searchquery.OpMinReposts:
		return "p.repost_count >= " + b.arg(op.Number) + "::bigint", nil
	}
	return "", fmt.Errorf("%w: unknown operator %s", errSearch, op)
}

// userID is the id of the user with that username (any case), or 0 (no
// post's) if there is none. It is a value, not a subquery, so that the
// planner sees which author it is (a prolific one or not).
func (b *sqlBuilder) userID(username string) string {
	return b.arg(b.users[strings.ToLower(username)]) + "::bigint"
}

// searchUsers resolves the usernames of q's from: and to: operators, in
// one query; there is none to run for most queries.
func (db *DB) searchUsers(ctx context.Context, q *searchquery.Query) (map[string]int64, error) {
	var names []string
	if q != nil && q.Root != nil {
		names = usernames(q.Root, names)
	}
	if len(names) == 0 {
		return nil, nil
	}
	rows, err := db.pool.Query(ctx, `SELECT lower(username), id FROM users WHERE lower(username) = ANY($1::text[])`, names)
	if err != nil {
		return nil, wrap("resolve search usernames", err)
	}
	users := map[string]int64{}
	var name string
	var id int64
	_, err = pgx.ForEachRow(rows, []any{&name, &id}, func() error {
		users[name] = id
		return nil
	})
	return users, wrap("resolve search usernames", err)
}

// usernames appends the lower-cased usernames of n's from: and to:
// operators to names.
func usernames(n searchquery.Node, names []string) []string {
	switch n := n.(type) {
	case *searchquery.And:
		for _, c := range n.Children {
			names = usernames(c, names)
		}
	case *searchquery.Or:
		for _, c := range n.Children {
			names = usernames(c, names)
		}
	case *searchquery.Not:
		names = usernames(n.Child, names)
	case *searchquery.Operator:
		if n.Name == searchquery.OpFrom || n.Name == searchquery.OpTo {
			names = append(names, strings.ToLower(n.Value))
		}
	}
	return names
}
