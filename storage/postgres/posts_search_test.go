package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/corpus"
)

// searchFixture writes users and posts with direct SQL, so that every
// column of 0012 can be set.
type searchFixture struct {
	t    *testing.T
	db   *postgres.DB
	pool *pgxpool.Pool
	// next is the created_at of the next post that sets none: posts are
	// a minute apart, in insertion order.
	next time.Time
}

func newSearchFixture(t *testing.T) *searchFixture {
	t.Helper()
	db, pool := storagetest.NewDBWithPool(t)
	return &searchFixture{t: t, db: db, pool: pool, next: t0}
}

// user inserts a user; states name the columns set to t0 ("protected",
// "suspended", "deactivated", "deleted").
func (f *searchFixture) user(username string, states ...string) int64 {
	f.t.Helper()
	cols := []string{"username"}
	vals := []string{"$1"}
	for _, s := range states {
		cols = append(cols, s+"_at")
		vals = append(vals, "$2")
	}
	args := []any{username}
	if len(states) > 0 {
		args = append(args, t0.Add(-time.Hour))
	}
	var id int64
	err := f.pool.QueryRow(f.t.Context(), `INSERT INTO users (`+strings.Join(cols, ", ")+`) VALUES (`+strings.Join(vals, ", ")+`) RETURNING id`,
		args...).Scan(&id)
	if err != nil {
		f.t.Fatalf("insert user %s: %v", username, err)
	}
	return id
}

// post inserts a post by author with text and the other columns of cols
// (column name -> value); id, conversation_id and edit_root_id default to
// a fresh id, created_at to the fixture's next minute.
func (f *searchFixture) post(author int64, text string, cols map[string]any) int64 {
	f.t.Helper()
	ctx := f.t.Context()
	id, err := f.db.NextID(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	row := map[string]any{"id": id, "author_id": author, "text": text, "conversation_id": id, "edit_root_id": id, "created_at": f.next}
	f.next = f.next.Add(time.Minute)
	for k, v := range cols {
		row[k] = v
	}
	var names, params []string
	var args []any
	for k, v := range row {
		args = append(args, v)
		names = append(names, k)
		params = append(params, fmt.Sprintf("$%d", len(args)))
	}
	if _, err := f.pool.Exec(ctx, `INSERT INTO posts (`+strings.Join(names, ", ")+`) VALUES (`+strings.Join(params, ", ")+`)`, args...); err != nil {
		f.t.Fatalf("insert post %q: %v", text, err)
	}
	return id
}

func mustParse(t *testing.T, q string) *searchquery.Query {
	t.Helper()
	parsed, err := searchquery.Parse(q)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q, err)
	}
	return parsed
}

func pageIDs(posts []storage.Post) []int64 {
	out := make([]int64, len(posts))
	for i, p := range posts {
		out[i] = p.ID
	}
	return out
}

func TestSearchPostsOperators(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	alice, bob, gina := f.user("alice"), f.user("Bob"), f.user("gina")
	carol := f.user("carol", "protected")
	dave, erin, frank := f.user("dave", "suspended"), f.user("erin", "deactivated"), f.user("frank", "deleted")

	p1 := f.post(alice, "The quick brown fox @Bob #Fox", map[string]any{"lang": "en", "mentions": []string{"bob"},
		"hashtags": []string{"fox"}, "media_ids": []int64{11}, "like_count": 10})
	p2 := f.post(bob, "Quick thinking, brown bear!", map[string]any{"lang": "en", "in_reply_to_post_id": p1,
		"in_reply_to_user_id": alice, "conversation_id": p1, "like_count": 3})
	p3 := f.post(alice, "RT @Bob: Quick thinking, brown bear!", map[string]any{"lang": "en", "repost_of_id": p2, "mentions": []string{"bob"}})
	p4 := f.post(gina, "so quick $AAPL", map[string]any{"lang": "es", "quote_of_id": p1, "cashtags": []string{"aapl"}})
	p5 := f.post(carol, "quick secret", map[string]any{"lang": "en"})
	f.post(dave, "quick suspended", nil)
	f.post(erin, "quick gone", nil)
	f.post(frank, "quick deleted user", nil)
	f.post(alice, "quick deleted post", map[string]any{"deleted_at": t0})
	p10 := f.post(alice, "quick old version", map[string]any{"superseded_at": t0})
	p11 := f.post(alice, "quick new version", map[string]any{"edit_root_id": p10, "lang": "en"})
	p12 := f.post(bob, "!!! ??? ...", nil)
	p13 := f.post(gina, "café crème brûlée #Café", map[string]any{"lang": "fr", "hashtags": []string{"café"}})
	p14 := f.post(bob, "see https://Example.com/path", map[string]any{"url_terms": []string{"example.com/path", "example.com"},
		"like_count": 100, "repost_count": 5, "reply_count": 7})

	none := []int64{}
	cases := []struct {
		query  string
		viewer int64
		want   []int64 // ascending; results come newest first
	}{
		// Terms and phrases: live, latest versions of visible authors;
		// never a repost; protected authors for themselves only.
		{"quick", 0, []int64{p1, p2, p4, p11}},
		{"QUICK", 0, []int64{p1, p2, p4, p11}},
		{"quick", carol, []int64{p1, p2, p4, p5, p11}},
		{"quick", alice, []int64{p1, p2, p4, p11}},
		{`"brown fox"`, 0, []int64{p1}},
		{`"fox brown"`, 0, none},
		{`"quick brown"`, 0, []int64{p1}},
		{`"quick   BROWN"`, 0, []int64{p1}},
		{"bear", 0, []int64{p2}},
		{"bear is:retweet", 0, none},
		{"thinking,", 0, []int64{p2}},
		{"café", 0, []int64{p13}},
		// Punctuation only: no token, no match (even where the text has it).
		{"!!!", 0, none},
		{`"?? ..."`, 0, none},
		// from: and to: (any case; unknown users match nothing).
		{"from:alice", 0, []int64{p1, p3, p11}},
		{"from:ALICE", 0, []int64{p1, p3, p11}},
		{"from:bob", 0, []int64{p2, p12, p14}},
		{"from:nobody", 0, none},
		{"quick -from:nobody", 0, []int64{p1, p2, p4, p11}},
		{"from:carol", 0, none},
		{"from:carol", carol, []int64{p5}},
		{"from:dave", 0, none},
		{"to:alice", 0, []int64{p2}},
		{"quick -to:alice", 0, []int64{p1, p4, p11}},
		{"to:nobody", 0, none},
		// Entities (matched lower-cased; operators match reposts).
		{"@bob", 0, []int64{p1, p3}},
		{"@BOB -is:retweet", 0, []int64{p1}},
		{"#fox", 0, []int64{p1}},
		{"#FOX", 0, []int64{p1}},
		{"#café", 0, []int64{p13}},
		{"$aapl", 0, []int64{p4}},
		{"$AAPL", 0, []int64{p4}},
		{"url:https://example.com/path/", 0, []int64{p14}},
		{`url:"EXAMPLE.com"`, 0, []int64{p14}},
		{"url:example.com/other", 0, none},
		{`url:"http://"`, 0, none},
		{"lang:es", 0, []int64{p4}},
		{"lang:EN", 0, []int64{p1, p2, p3, p11}},
		{"lang:und", 0, []int64{p12, p14}},
		{fmt.Sprintf("conversation_id:%d", p1), 0, []int64{p1, p2}},
		{"is:reply", 0, []int64{p2}},
		{"is:quote", 0, []int64{p4}},
		{"is:retweet", 0, []int64{p3}},
		{"quick -is:reply", 0, []int64{p1, p4, p11}},
		{"has:media", 0, []int64{p1}},
		{"has:links", 0, []int64{p14}},
		{"has:mentions", 0, []int64{p1, p3}},
		{"min_likes:10", 0, []int64{p1, p14}},
		{"min_likes:0 from:gina", 0, []int64{p4, p13}},
		{"min_likes:101", 0, none},
		{"min_replies:7", 0, []int64{p14}},
		{"min_reposts:5", 0, []int64{p14}},
		// Negation, OR and precedence.
		{"quick -fox", 0, []int64{p2, p4, p11}},
		{`quick -"brown fox"`, 0, []int64{p2, p4, p11}},
		{`quick -"fox brown"`, 0, []int64{p1, p2, p4, p11}},
		{"quick -(fox OR bear)", 0, []int64{p4, p11}},
		{"quick -(brown thinking)", 0, []int64{p1, p4, p11}},
		{"fox OR bear", 0, []int64{p1, p2}},
		{"fox OR bear OR !!!", 0, []int64{p1, p2}},
		{"fox OR #café", 0, []int64{p1, p13}},
		{"fox OR from:gina", 0, []int64{p1, p4, p13}},
		{"quick fox OR crème", 0, []int64{p1, p13}},
		{"quick (fox OR crème)", 0, []int64{p1}},
		{"(quick OR café) lang:en", 0, []int64{p1, p2, p11}},
		{"from:alice is:retweet", 0, []int64{p3}},
		{"from:alice -quick", 0, []int64{p3}},
		{"from:bob -!!!", 0, []int64{p2, p12, p14}},
	}
	for _, c := range cases {
		page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, c.query), Limit: 100, ViewerID: c.viewer})
		if err != nil {
			t.Errorf("search %q: %v", c.query, err)
			continue
		}
		want := slices.Clone(c.want)
		slices.Reverse(want)
		if got := pageIDs(page.Posts); !slices.Equal(got, want) {
			t.Errorf("search %q (viewer %d) = %v, want %v", c.query, c.viewer, got, want)
		}
		if page.Next != nil {
			t.Errorf("search %q: Next = %+v on the only page", c.query, page.Next)
		}
		// Counts agree with the search.
		buckets, err := f.db.CountPosts(ctx, storage.PostCount{Query: mustParse(t, c.query), Start: t0, End: t0.Add(time.Hour),
			Granularity: storage.GranularityHour, ViewerID: c.viewer})
		if err != nil {
			t.Errorf("count %q: %v", c.query, err)
		} else if len(buckets) != 1 || buckets[0].Count != int64(len(c.want)) {
			t.Errorf("count %q = %+v, want one bucket of %d", c.query, buckets, len(c.want))
		}
	}

	// The posts come back whole, edit history included.
	page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, "version"), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Posts) != 1 || !slices.Equal(page.Posts[0].EditHistory, []int64{p10, p11}) || page.Posts[0].Text != "quick new version" {
		t.Errorf("search version = %+v, want post %d with history [%d %d]", page.Posts, p11, p10, p11)
	}
	page, err = f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, "see"), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Posts) != 1 {
		t.Fatalf("search see = %v, want one post", pageIDs(page.Posts))
	}
	p := page.Posts[0]
	if p.ID != p14 || p.AuthorID != bob || p.Metrics.Likes != 100 || p.Metrics.Reposts != 5 || p.Metrics.Replies != 7 ||
		!p.CreatedAt.Equal(t0.Add(13*time.Minute)) || !slices.Equal(p.EditHistory, []int64{p14}) {
		t.Errorf("search see = %+v, want post %d as inserted", p, p14)
	}
}

func TestSearchPostsWindows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	u := f.user("windows")
	var ids []int64
	for i := range 6 { // t0, t0+1m, ... t0+5m
		ids = append(ids, f.post(u, fmt.Sprintf("window %d", i), nil))
	}
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	cases := []struct {
		name             string
		start, end       time.Time
		sinceID, untilID int64
		want             []int64 // indexes into ids, newest first
	}{
		{"open", time.Time{}, time.Time{}, 0, 0, []int64{5, 4, 3, 2, 1, 0}},
		{"start inclusive", at(2), time.Time{}, 0, 0, []int64{5, 4, 3, 2}},
		{"end exclusive", time.Time{}, at(2), 0, 0, []int64{1, 0}},
		{"both", at(1), at(4), 0, 0, []int64{3, 2, 1}},
		{"sub-second start", at(1).Add(time.Nanosecond * 1500), time.Time{}, 0, 0, []int64{5, 4, 3, 2}},
		{"since exclusive", time.Time{}, time.Time{}, ids[2], 0, []int64{5, 4, 3}},
		{"until exclusive", time.Time{}, time.Time{}, 0, ids[2], []int64{1, 0}},
		{"since and until", time.Time{}, time.Time{}, ids[0], ids[4], []int64{3, 2, 1}},
		{"all four", at(2), at(5), ids[0], ids[4], []int64{3, 2}},
		{"empty", at(3), at(3), 0, 0, nil},
	}
	for _, c := range cases {
		page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, "window"), Start: c.start, End: c.end,
			SinceID: c.sinceID, UntilID: c.untilID, Limit: 10})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var want []int64
		for _, i := range c.want {
			want = append(want, ids[i])
		}
		if got := pageIDs(page.Posts); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("%s: got %v, want %v", c.name, got, want)
		}
	}
}

func TestSearchPostsPagination(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	u := f.user("pages")
	other := f.user("other")
	score := map[int64]int64{}
	var all []int64
	for i := range 23 {
		// Scores with ties: likes 0..3, every fifth with reposts (x2),
		// every seventh with a reply and a quote.
		likes, reposts, replies, quotes := i%4, 0, 0, 0
		if i%5 == 0 {
			reposts = 2
		}
		if i%7 == 0 {
			replies, quotes = 1, 1
		}
		id := f.post(u, fmt.Sprintf("paged post %d", i), map[string]any{"like_count": likes, "repost_count": reposts,
			"reply_count": replies, "quote_count": quotes})
		score[id] = int64(likes + 2*reposts + replies + quotes)
		all = append(all, id)
		f.post(other, "unrelated", map[string]any{"like_count": 50})
	}
	recency := slices.Clone(all)
	slices.Reverse(recency)
	relevancy := slices.Clone(all)
	slices.SortFunc(relevancy, func(a, b int64) int {
		if score[a] != score[b] {
			return int(score[b] - score[a])
		}
		return int(b - a)
	})
	for _, c := range []struct {
		order string
		want  []int64
	}{{storage.SortRecency, recency}, {"", recency}, {storage.SortRelevancy, relevancy}} {
		for _, limit := range []int{1, 4, 5, 23, 100} {
			var got []int64
			var after *storage.PostCursor
			pages := 0
			for {
				page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, "paged"), Limit: limit, SortOrder: c.order, After: after})
				if err != nil {
					t.Fatalf("%s limit %d: %v", c.order, limit, err)
				}
				pages++
				if len(page.Posts) > limit || len(page.Posts) == 0 && len(got) > 0 {
					t.Fatalf("%s limit %d: page %d has %d posts", c.order, limit, pages, len(page.Posts))
				}
				got = append(got, pageIDs(page.Posts)...)
				if page.Next == nil {
					break
				}
				last := page.Posts[len(page.Posts)-1]
				if page.Next.ID != last.ID {
					t.Fatalf("%s limit %d: Next %+v is not the last post %d", c.order, limit, page.Next, last.ID)
				}
				if c.order == storage.SortRelevancy && page.Next.Score != score[last.ID] {
					t.Fatalf("%s limit %d: Next score %d, want %d", c.order, limit, page.Next.Score, score[last.ID])
				}
				if len(page.Posts) != limit {
					t.Fatalf("%s limit %d: a page of %d posts has a Next", c.order, limit, len(page.Posts))
				}
				after = page.Next
				if pages > 30 {
					t.Fatalf("%s limit %d: no end", c.order, limit)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s limit %d: walked %v, want %v", c.order, limit, got, c.want)
			}
			if wantPages := max(1, (len(c.want)+limit-1)/limit); pages != wantPages {
				t.Errorf("%s limit %d: %d pages, want %d", c.order, limit, pages, wantPages)
			}
		}
	}
}

func TestCountPostsBuckets(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	u := f.user("counter")
	hidden := f.user("hidden", "protected")
	base := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, at := range []time.Time{
		base.Add(10*time.Hour + 29*time.Minute), // before the hour window
		base.Add(10*time.Hour + 30*time.Minute), // first (clipped) hour
		base.Add(10*time.Hour + 59*time.Minute + 59*time.Second),
		base.Add(11 * time.Hour),                // second hour
		base.Add(13*time.Hour + 14*time.Minute), // last (clipped) hour
		base.Add(13*time.Hour + 15*time.Minute), // the end: out
		base.Add(26 * time.Hour),                // next day
		base.Add(50*time.Hour + time.Second),    // third day
	} {
		f.post(u, "counted", map[string]any{"created_at": at})
	}
	f.post(hidden, "counted", map[string]any{"created_at": base.Add(11 * time.Hour)})
	f.post(u, "counted", map[string]any{"created_at": base.Add(11 * time.Hour), "deleted_at": base})
	f.post(u, "other words", map[string]any{"created_at": base.Add(11 * time.Hour)})

	type bucket struct {
		start, end time.Time
		count      int64
	}
	h := func(hh, mm int) time.Time {
		return base.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute)
	}
	cases := []struct {
		name        string
		granularity string
		start, end  time.Time
		viewer      int64
		want        []bucket
	}{
		{"hours clipped", storage.GranularityHour, h(10, 30), h(13, 15), 0, []bucket{
			{h(10, 30), h(11, 0), 2}, {h(11, 0), h(12, 0), 1}, {h(12, 0), h(13, 0), 0}, {h(13, 0), h(13, 15), 1}}},
		{"hours for the author", storage.GranularityHour, h(10, 30), h(13, 15), hidden, []bucket{
			{h(10, 30), h(11, 0), 2}, {h(11, 0), h(12, 0), 2}, {h(12, 0), h(13, 0), 0}, {h(13, 0), h(13, 15), 1}}},
		{"aligned hours", storage.GranularityHour, h(11, 0), h(13, 0), 0, []bucket{
			{h(11, 0), h(12, 0), 1}, {h(12, 0), h(13, 0), 0}}},
		{"inside one hour", storage.GranularityHour, h(10, 29), h(10, 31), 0, []bucket{{h(10, 29), h(10, 31), 2}}},
		{"minutes", storage.GranularityMinute, h(10, 28), h(10, 31), 0, []bucket{
			{h(10, 28), h(10, 29), 0}, {h(10, 29), h(10, 30), 1}, {h(10, 30), h(10, 31), 1}}},
		{"minutes clipped", storage.GranularityMinute, h(10, 59).Add(30 * time.Second), h(11, 0).Add(30 * time.Second), 0, []bucket{
			{h(10, 59).Add(30 * time.Second), h(11, 0), 1}, {h(11, 0), h(11, 0).Add(30 * time.Second), 1}}},
		{"days", storage.GranularityDay, h(0, 0), h(72, 0), 0, []bucket{
			{h(0, 0), h(24, 0), 6}, {h(24, 0), h(48, 0), 1}, {h(48, 0), h(72, 0), 1}}},
		{"days clipped", storage.GranularityDay, h(12, 0), h(50, 0), 0, []bucket{
			{h(12, 0), h(24, 0), 2}, {h(24, 0), h(48, 0), 1}, {h(48, 0), h(50, 0), 0}}},
		{"nothing there", storage.GranularityDay, h(-48, 0), h(-24, 0), 0, []bucket{{h(-48, 0), h(-24, 0), 0}}},
	}
	for _, c := range cases {
		got, err := f.db.CountPosts(ctx, storage.PostCount{Query: mustParse(t, "counted"), Start: c.start, End: c.end,
			Granularity: c.granularity, ViewerID: c.viewer})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var gotB []bucket
		for _, b := range got {
			if b.Start.Location() != time.UTC || b.End.Location() != time.UTC {
				t.Errorf("%s: bucket %v..%v not in UTC", c.name, b.Start, b.End)
			}
			gotB = append(gotB, bucket{b.Start, b.End, b.Count})
		}
		if !slices.EqualFunc(gotB, c.want, func(a, b bucket) bool { return a.start.Equal(b.start) && a.end.Equal(b.end) && a.count == b.count }) {
			t.Errorf("%s:\n got  %v\n want %v", c.name, gotB, c.want)
		}
	}

	// Since and until ids narrow the counts too; a window in another time
	// zone is the same instants.
	ids := func(q string) []int64 {
		page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, q), Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return pageIDs(page.Posts)
	}
	all := ids("counted") // newest first
	paris := time.FixedZone("Paris", 3600)
	got, err := f.db.CountPosts(ctx, storage.PostCount{Query: mustParse(t, "counted"), Start: h(0, 0).In(paris), End: h(24, 0).In(paris),
		SinceID: all[len(all)-1], UntilID: all[0], Granularity: storage.GranularityDay})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Count != 5 || !got[0].Start.Equal(h(0, 0)) {
		t.Errorf("count with since/until = %+v, want 5 in one day from %v", got, h(0, 0))
	}

	// Every granularity over a long window: one bucket each, in order.
	for _, g := range []struct {
		name string
		step time.Duration
		n    int
	}{{storage.GranularityMinute, time.Minute, 60 * 24}, {storage.GranularityHour, time.Hour, 24 * 7}, {storage.GranularityDay, 24 * time.Hour, 31}} {
		got, err := f.db.CountPosts(ctx, storage.PostCount{Query: mustParse(t, "counted"), Start: base, End: base.Add(time.Duration(g.n) * g.step), Granularity: g.name})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != g.n {
			t.Fatalf("%s: %d buckets, want %d", g.name, len(got), g.n)
		}
		total := int64(0)
		for i, b := range got {
			if !b.Start.Equal(base.Add(time.Duration(i)*g.step)) || !b.End.Equal(b.Start.Add(g.step)) {
				t.Fatalf("%s: bucket %d is %v..%v", g.name, i, b.Start, b.End)
			}
			total += b.Count
		}
		if want := map[string]int64{"minute": 6, "hour": 8, "day": 8}[g.name]; total != want {
			t.Errorf("%s: total %d, want %d", g.name, total, want)
		}
	}
}

func TestSearchPostsRefusesBadRequests(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	q := mustParse(t, "x")
	for _, s := range []storage.PostSearch{
		{Limit: 10},
		{Query: &searchquery.Query{}, Limit: 10},
		{Query: q},
		{Query: q, Limit: -1},
		{Query: q, Limit: 10, SortOrder: "popular"},
	} {
		if _, err := db.SearchPosts(ctx, s); err == nil {
			t.Errorf("SearchPosts(%+v) = nil error", s)
		}
	}
	for _, c := range []storage.PostCount{
		{Start: t0, End: t0.Add(time.Hour), Granularity: storage.GranularityHour},
		{Query: q, Start: t0, End: t0.Add(time.Hour), Granularity: "week"},
		{Query: q, Start: t0, End: t0, Granularity: storage.GranularityHour},
		{Query: q, Start: t0, End: t0.Add(-time.Hour), Granularity: storage.GranularityHour},
		{Query: q, End: t0, Granularity: storage.GranularityHour},
		{Query: q, Start: t0, Granularity: storage.GranularityHour},
	} {
		if _, err := db.CountPosts(ctx, c); err == nil {
			t.Errorf("CountPosts(%+v) = nil error", c)
		}
	}
	// A query made by hand with an unknown operator is refused, not run.
	bad := &searchquery.Query{Root: &searchquery.Operator{Name: "near", Value: "x"}}
	if _, err := db.SearchPosts(ctx, storage.PostSearch{Query: bad, Limit: 10}); err == nil {
		t.Error("SearchPosts with an unknown operator = nil error")
	}
}

// Every value of a query is a bind parameter: quotes, backslashes and SQL
// in terms, phrases and values reach PostgreSQL as data.
func TestSearchPostsBindsValues(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	u := f.user("binder")
	p := f.post(u, `it's a 'quoted' \ back$lash; drop table posts`, map[string]any{"url_terms": []string{"x.com/'"}})
	for _, q := range []string{`it's`, `"'quoted' \"`, `"drop table posts"`, `url:"x.com/'"`, `lash;`} {
		sql, args, err := f.db.SearchPostsSQL(ctx, storage.PostSearch{Query: mustParse(t, q), Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(sql, "'quoted'") || strings.Contains(sql, "drop table") || strings.Contains(sql, "it's") || strings.Contains(sql, "x.com") {
			t.Errorf("%q: value in the SQL text: %s", q, sql)
		}
		if len(args) == 0 {
			t.Errorf("%q: no arguments", q)
		}
		page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, q), Limit: 5})
		if err != nil {
			t.Fatalf("%q: %v", q, err)
		}
		if got := pageIDs(page.Posts); !slices.Equal(got, []int64{p}) {
			t.Errorf("%q: got %v, want [%d]", q, got, p)
		}
	}
}

// TestSearchPlansUseIndexes checks on a generated corpus that term, phrase,
// OR, from: and is:retweet searches and counts read posts through indexes
// (the term's GIN entries, or an index in the result's order for a common
// term), never with a sequential scan of posts, and that a repost's original
// is probed by id, never hashed from a scan of every post.
func TestSearchPlansUseIndexes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, pool := storagetest.NewDBWithPool(t)
	c := corpus.Load(t, pool, 30_000, t0)
	week := c.End.Add(-7 * 24 * time.Hour)
	explain := func(sql string, args []any) string {
		t.Helper()
		return explainPlan(t, pool, sql, args)
	}
	rare, mid, common := c.Words[3000], c.Words[100], c.Words[5]
	for _, q := range []struct {
		query   string
		wantGIN bool // must read the term's GIN entries
	}{
		{rare, true},
		{fmt.Sprintf("%s %s", rare, mid), true},
		{fmt.Sprintf(`"%s %s"`, c.Words[3001], c.Words[3002]), true},
		{fmt.Sprintf("%s OR %s OR %s", c.Words[3003], c.Words[3004], c.Words[3005]), true},
		{fmt.Sprintf("%s -%s", rare, common), true},
		{mid, false},
		{common, false},
		{fmt.Sprintf("%s OR %s OR %s", c.Words[50], c.Words[150], c.Words[400]), false},
		{"from:" + c.Usernames[0], false},
		{fmt.Sprintf("from:%s %s", c.Usernames[1], mid), false},
		{"is:retweet", false}, // every candidate probes its original
	} {
		parsed := mustParse(t, q.query)
		for _, s := range []storage.PostSearch{
			{Query: parsed, Limit: 100},
			{Query: parsed, Limit: 100, Start: week},
			{Query: parsed, Limit: 100, Start: week.Add(-7 * 24 * time.Hour), End: week}, // a past window
			{Query: parsed, Limit: 10, SortOrder: storage.SortRelevancy},
		} {
			sql, args, err := db.SearchPostsSQL(ctx, s)
			if err != nil {
				t.Fatal(err)
			}
			plan := explain(sql, args)
			if strings.Contains(plan, "Seq Scan on posts") {
				t.Errorf("search %q (start %v, %s): sequential scan of posts:\n%s", q.query, s.Start, s.SortOrder, plan)
			}
			if strings.Contains(plan, "hashed SubPlan") {
				t.Errorf("search %q (start %v, %s): the reposts' originals are hashed, not probed:\n%s", q.query, s.Start, s.SortOrder, plan)
			}
			if q.wantGIN && !strings.Contains(plan, "posts_search_vector") {
				t.Errorf("search %q (start %v, %s): the GIN index is not used:\n%s", q.query, s.Start, s.SortOrder, plan)
			}
		}
		sql, args, err := db.CountPostsSQL(ctx, storage.PostCount{Query: parsed, Start: week, End: c.End, Granularity: storage.GranularityHour})
		if err != nil {
			t.Fatal(err)
		}
		plan := explain(sql, args)
		if strings.Contains(plan, "Seq Scan on posts") {
			t.Errorf("count %q: sequential scan of posts:\n%s", q.query, plan)
		}
		if strings.Contains(plan, "hashed SubPlan") {
			t.Errorf("count %q: the reposts' originals are hashed, not probed:\n%s", q.query, plan)
		}
		if q.wantGIN && !strings.Contains(plan, "posts_search_vector") {
			t.Errorf("count %q: the GIN index is not used:\n%s", q.query, plan)
		}
	}
}

// A repost copies its original's text: search and counts find it only
// while its original is visible to the viewer too.
func TestSearchPostsRepostsOfHiddenOriginals(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	bob := f.user("bob")
	alice := f.user("alice")
	pete := f.user("pete", "protected")
	sam, dan, del := f.user("sam", "suspended"), f.user("dan", "deactivated"), f.user("del", "deleted")

	repost := func(original int64, author string) int64 {
		return f.post(bob, "RT @"+author+": hello", map[string]any{"repost_of_id": original, "mentions": []string{author}})
	}
	live := f.post(alice, "hello", nil)
	gone := f.post(alice, "hello", map[string]any{"deleted_at": t0})
	// An edited original: the repost names the first version, which is
	// superseded but still the visible chain's.
	v1 := f.post(alice, "hello", map[string]any{"superseded_at": t0})
	f.post(alice, "hello again", map[string]any{"edit_root_id": v1})
	ofLive, ofEdited := repost(live, "alice"), repost(v1, "alice")
	repost(gone, "alice") // left by a delete made without DeletePost
	ofProtected := repost(f.post(pete, "hello", nil), "pete")
	repost(f.post(sam, "hello", nil), "sam")
	repost(f.post(dan, "hello", nil), "dan")
	repost(f.post(del, "hello", nil), "del")

	for _, c := range []struct {
		query  string
		viewer int64
		want   []int64 // ascending
	}{
		{"from:bob", 0, []int64{ofLive, ofEdited}},
		{"is:retweet", 0, []int64{ofLive, ofEdited}},
		{"from:bob", alice, []int64{ofLive, ofEdited}},
		{"from:bob", pete, []int64{ofLive, ofEdited, ofProtected}},
		{"from:bob", bob, []int64{ofLive, ofEdited}},
		{"@pete", pete, []int64{ofProtected}},
		{"@pete", 0, nil},
		{"@sam OR @dan OR @del", 0, nil},
		{"has:mentions -@alice", pete, []int64{ofProtected}},
	} {
		page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, c.query), Limit: 100, ViewerID: c.viewer})
		if err != nil {
			t.Fatalf("search %q: %v", c.query, err)
		}
		want := slices.Clone(c.want)
		slices.Reverse(want)
		if got := pageIDs(page.Posts); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("search %q (viewer %d) = %v, want %v", c.query, c.viewer, got, want)
		}
		buckets, err := f.db.CountPosts(ctx, storage.PostCount{Query: mustParse(t, c.query), Start: t0, End: t0.Add(time.Hour),
			Granularity: storage.GranularityHour, ViewerID: c.viewer})
		if err != nil {
			t.Fatalf("count %q: %v", c.query, err)
		}
		if len(buckets) != 1 || buckets[0].Count != int64(len(c.want)) {
			t.Errorf("count %q (viewer %d) = %+v, want one bucket of %d", c.query, c.viewer, buckets, len(c.want))
		}
	}
}

// The # terms CreatePost stores (posttext.Tags: NFC, lower case) are the
// ones the parser accepts and the search compiles to (posttext.NormalizeTag),
// for every character extraction allows in a hashtag.
func TestSearchPostsHashtagsAsExtracted(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	u := f.user("tagger")
	create := func(text string) int64 {
		t.Helper()
		p, err := f.db.CreatePost(ctx, storage.Post{AuthorID: u, Text: text, Entities: posttext.Extract(text)})
		if err != nil {
			t.Fatalf("CreatePost(%q): %v", text, err)
		}
		return p.ID
	}
	tower := create("#東京・タワー の夜景")
	catalan := create("Visca #l·l i #Barça")
	cafe := create("un #Cafe\u0301 noir") // decomposed: e + combining acute
	zwnj := create("#می\u200cخواهم")
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"#東京・タワー", tower},
		{"#l·l", catalan},
		{"#L·L", catalan},
		{"#barça", catalan},
		{"#café", cafe},          // composed
		{"#CAFE\u0301", cafe},    // decomposed, upper case
		{"#می\u200cخواهم", zwnj}, // ZWNJ
	} {
		page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, c.query), Limit: 10})
		if err != nil {
			t.Fatalf("search %q: %v", c.query, err)
		}
		if got := pageIDs(page.Posts); !slices.Equal(got, []int64{c.want}) {
			t.Errorf("search %q = %v, want [%d]", c.query, got, c.want)
		}
	}
	if got := storagetest.StoredTerms(t, f.pool.Config().ConnString(), cafe).Hashtags; !slices.Equal(got, []string{"café"}) {
		t.Errorf("stored hashtags %q, want the NFC form [café]", got)
	}
}

// A link weighs 23 characters whatever its length: a post may carry one of
// thousands, whose url: term would not fit a GIN index entry. It is stored
// without that term, and found by its host.
func TestCreatePostWithALongURL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	u := f.user("linker")
	// Letters and digits that do not compress: PostgreSQL compresses a
	// long index entry before it checks its size.
	rng := rand.New(rand.NewPCG(1, 2))
	path := make([]byte, 5000)
	for i := range path {
		path[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[rng.IntN(36)]
	}
	long := "https://www.Example.com/" + string(path)
	text := "read " + long + " now"
	if n := posttext.WeightedLength(text); n > posttext.MaxWeightedLength {
		t.Fatalf("weighted length %d, want a valid post", n)
	}
	entities := posttext.Extract(text)
	if len(entities.URLs) != 1 || entities.URLs[0].URL != long {
		t.Fatalf("links %+v, want the whole long URL", entities.URLs)
	}
	p, err := f.db.CreatePost(ctx, storage.Post{AuthorID: u, Text: text, Entities: entities})
	if err != nil {
		t.Fatalf("CreatePost: %v", err)
	}
	stored := storagetest.StoredTerms(t, f.pool.Config().ConnString(), p.ID)
	if want := []string{"www.example.com", "example.com"}; !slices.Equal(stored.URLTerms, want) {
		t.Errorf("url terms %.200q, want %q", stored.URLTerms, want)
	}
	for _, c := range []struct {
		query string
		want  []int64
	}{
		{"url:example.com", []int64{p.ID}},
		{"url:www.example.com", []int64{p.ID}},
		{"has:links", []int64{p.ID}},
		{`url:"` + long + `"`, nil}, // longer than any stored term
	} {
		page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, c.query), Limit: 10})
		if err != nil {
			t.Fatalf("search %.40q: %v", c.query, err)
		}
		if got := pageIDs(page.Posts); !slices.Equal(got, c.want) && len(got)+len(c.want) > 0 {
			t.Errorf("search %.40q = %v, want %v", c.query, got, c.want)
		}
	}
}

// TestExcludesReposts: the original's visibility check is left out only of
// queries that can not find a repost.
func TestExcludesReposts(t *testing.T) {
	for q, want := range map[string]bool{
		"cats":                 true,
		`"two words"`:          true,
		"cats OR dogs":         true,
		"from:jack cats":       true,
		"from:jack":            false,
		"cats OR from:jack":    false,
		"-cats from:jack":      false,
		"is:retweet":           false,
		"(a OR b) (c OR #d)":   true,
		"#tag":                 false,
		"(a OR b) -is:retweet": true,
	} {
		if got := postgres.ExcludesReposts(mustParse(t, q).Root); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}

// explainPlan is PostgreSQL's plan for sql with args, planned for its
// values as the store runs it (an unnamed statement).
func explainPlan(t *testing.T, pool *pgxpool.Pool, sql string, args []any) string {
	t.Helper()
	rows, err := pool.Query(t.Context(), "EXPLAIN "+sql, append([]any{pgx.QueryExecModeCacheDescribe}, args...)...)
	if err != nil {
		t.Fatalf("explain: %v\n%s", err, sql)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// A page is read through one reused list of scan destinations: every post
// of it must still be the post PostByID reads, with nothing left over from
// the row before it (entities, media, edit history, deletion times) and
// nothing shared with it.
func TestSearchPostsReadsEachRowWhole(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	f := newSearchFixture(t)
	u := f.user("scanner")
	var want []storage.Post
	for _, c := range []struct {
		text  string
		media []int64
	}{
		{"scan one @scanner #first $ONE https://example.com/a", []int64{11, 12}},
		{"scan two plain", nil},
		{"scan three #third", []int64{13}},
		{"scan four plain", nil},
	} {
		p, err := f.db.CreatePost(ctx, storage.Post{AuthorID: u, Text: c.text, MediaIDs: c.media, Entities: posttext.Extract(c.text)})
		if err != nil {
			t.Fatalf("CreatePost(%q): %v", c.text, err)
		}
		want = append(want, reload(t, f.db, p.ID))
	}
	slices.Reverse(want) // newest first
	page, err := f.db.SearchPosts(ctx, storage.PostSearch{Query: mustParse(t, "scan"), Limit: 10})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if !reflect.DeepEqual(page.Posts, want) {
		t.Fatalf("searched posts differ from PostByID:\n got %+v\nwant %+v", page.Posts, want)
	}
	// Nothing shared: changing one post's slices leaves the others alone.
	page.Posts[3].Entities.Hashtags[0].Tag = "changed"
	page.Posts[3].MediaIDs[0] = 99
	if page.Posts[1].Entities.Hashtags[0].Tag != "third" || page.Posts[1].MediaIDs[0] != 13 {
		t.Errorf("posts share storage: third post now %+v", page.Posts[1])
	}
	byIDs, err := f.db.PostsByIDs(ctx, pageIDs(want))
	if err != nil {
		t.Fatalf("PostsByIDs: %v", err)
	}
	if !reflect.DeepEqual(byIDs, want) {
		t.Errorf("PostsByIDs differ from PostByID:\n got %+v\nwant %+v", byIDs, want)
	}
}
