package postgres_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func newsStory(lead string, keywords ...string) storage.NewsStory {
	return storage.NewsStory{LeadTerm: lead, Keywords: append([]string{lead}, keywords...), Name: "Story about " + lead,
		Summary: "Posts mention " + lead + ".", Hook: "Look at " + lead,
		Contexts: storage.NewsContexts{Topics: []string{lead}}, PostIDs: []int64{3, 2, 1}, Posts: 7}
}

func TestNewsStoryUpsert(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)

	first, created, err := db.UpsertNewsStory(ctx, newsStory("quake", "#quake"), now, nil)
	if err != nil || !created {
		t.Fatalf("create = %v, %v", created, err)
	}
	if first.ID == 0 || !first.CreatedAt.Equal(now) || !first.UpdatedAt.Equal(now) || first.Category != storage.NewsCategory {
		t.Errorf("created story = %+v", first)
	}
	// Every contexts list is there, empty rather than null.
	if first.Contexts.Entities.People == nil || first.Contexts.Finance.Tickers == nil || first.Contexts.Sports.Teams == nil {
		t.Errorf("contexts = %+v", first.Contexts)
	}
	got, err := db.NewsStoryByID(ctx, first.ID)
	if err != nil || got.Name != first.Name || !slices.Equal(got.PostIDs, []int64{3, 2, 1}) || !slices.Equal(got.Keywords, []string{"quake", "#quake"}) ||
		got.Posts != 7 || !slices.Equal(got.Contexts.Topics, []string{"quake"}) {
		t.Errorf("by id = %+v, %v", got, err)
	}
	if _, err := db.NewsStoryByID(ctx, 42); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}

	// The same lead within the window refreshes the story in place.
	later := now.Add(time.Hour)
	next := newsStory("quake", "#quake", "tsunami")
	next.Name, next.PostIDs, next.Posts = "Bigger quake", []int64{9, 3}, 20
	refreshed, created, err := db.UpsertNewsStory(ctx, next, later, nil)
	if err != nil || created || refreshed.ID != first.ID || !refreshed.CreatedAt.Equal(now) || !refreshed.UpdatedAt.Equal(later) ||
		refreshed.Name != "Bigger quake" || !slices.Equal(refreshed.PostIDs, []int64{9, 3}) || refreshed.Posts != 20 {
		t.Errorf("refresh = %+v, created %v, %v", refreshed, created, err)
	}
	// A keyword of a recent story leading now refreshes that story too.
	byKeyword, created, err := db.UpsertNewsStory(ctx, newsStory("tsunami", "quake"), later.Add(time.Minute), nil)
	if err != nil || created || byKeyword.ID != first.ID || byKeyword.LeadTerm != "tsunami" {
		t.Errorf("refresh by keyword = %+v, created %v, %v", byKeyword, created, err)
	}
	// ... unless the run already refreshed it.
	other, created, err := db.UpsertNewsStory(ctx, newsStory("quake"), later.Add(2*time.Minute), []int64{first.ID})
	if err != nil || !created || other.ID == first.ID {
		t.Errorf("excluded story matched: %+v, created %v, %v", other, created, err)
	}
	// A story whose lead joins a stronger lead is refreshed too.
	followed, created, err := db.UpsertNewsStory(ctx, newsStory("#quake", "quake"), later.Add(3*time.Minute), []int64{first.ID})
	if err != nil || created || followed.ID != other.ID || followed.LeadTerm != "#quake" {
		t.Errorf("refresh by the old lead in the keywords = %+v, created %v, %v", followed, created, err)
	}
	// After the window, the lead starts a new story.
	fresh, created, err := db.UpsertNewsStory(ctx, newsStory("tsunami"), later.Add(storage.NewsRefreshWindow+time.Hour), nil)
	if err != nil || !created || fresh.ID == first.ID || fresh.ID == other.ID {
		t.Errorf("after the window = %+v, created %v, %v", fresh, created, err)
	}
}

func TestSearchNewsStories(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	now := time.Now().UTC().Truncate(time.Microsecond)
	save := func(s storage.NewsStory, at time.Time) storage.NewsStory {
		t.Helper()
		out, _, err := db.UpsertNewsStory(ctx, s, at, nil)
		if err != nil {
			t.Fatalf("upsert: %v", err)
		}
		return out
	}
	old := save(storage.NewsStory{LeadTerm: "quake", Keywords: []string{"quake", "#quake"}, Name: "Quake shakes the coast",
		Summary: "Many posts."}, now.Add(-48*time.Hour))
	quake := save(storage.NewsStory{LeadTerm: "#quake", Keywords: []string{"#quake"}, Name: "Another one",
		Summary: "Posts about the coast."}, now.Add(-2*time.Hour))
	election := save(storage.NewsStory{LeadTerm: "election", Keywords: []string{"election"}, Name: "Election night",
		Summary: "Results come in on the coast."}, now.Add(-time.Hour))
	ids := func(q storage.NewsSearch) []int64 {
		t.Helper()
		list, err := db.SearchNewsStories(ctx, q)
		if err != nil {
			t.Fatalf("search %+v: %v", q, err)
		}
		var out []int64
		for _, s := range list {
			out = append(out, s.ID)
		}
		return out
	}
	week := now.Add(-7 * 24 * time.Hour)
	for _, tc := range []struct {
		words []string
		since time.Time
		limit int
		want  []int64
	}{
		{words: []string{"quake"}, since: week, limit: 10, want: []int64{quake.ID, old.ID}}, // keyword "#quake" matches "quake"
		{words: []string{"coast"}, since: week, limit: 10, want: []int64{election.ID, quake.ID, old.ID}},
		{words: []string{"coast"}, since: week, limit: 2, want: []int64{election.ID, quake.ID}},
		{words: []string{"coast"}, since: now.Add(-24 * time.Hour), limit: 10, want: []int64{election.ID, quake.ID}},
		{words: []string{"coast", "results"}, since: week, limit: 10, want: []int64{election.ID}}, // every word
		{words: []string{"nothing"}, since: week, limit: 10, want: nil},
		{words: nil, since: week, limit: 10, want: []int64{election.ID, quake.ID, old.ID}},
	} {
		if got := ids(storage.NewsSearch{Words: tc.words, Since: tc.since, Limit: tc.limit}); !slices.Equal(got, tc.want) {
			t.Errorf("search %v since %v limit %d = %v, want %v", tc.words, tc.since, tc.limit, got, tc.want)
		}
	}
}

// addTermHour adds posts to a bucket of insight_term_hours, in country and
// worldwide, as the applier counts them.
func addTermHour(t *testing.T, conn *pgx.Conn, term, country string, hour time.Time, posts int) {
	t.Helper()
	_, err := conn.Exec(t.Context(), `INSERT INTO insight_term_hours (term, country_code, hour, posts) VALUES ($1, $2, $3, $4), ($1, '*', $3, $4)
		ON CONFLICT (term, country_code, hour) DO UPDATE SET posts = insight_term_hours.posts + EXCLUDED.posts`,
		term, country, hour, posts)
	if err != nil {
		t.Fatalf("add term hour: %v", err)
	}
}

func TestSpikingTerms(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	cur := time.Now().UTC().Truncate(time.Hour)
	now := cur.Add(15 * time.Minute) // three quarters of the previous hour are within the last 60 minutes
	prev := cur.Add(-time.Hour)
	// quake: 6 + 4 now (two countries), 4 in the previous hour, nothing before.
	addTermHour(t, conn, "quake", "US", cur, 6)
	addTermHour(t, conn, "quake", "JP", cur, 4)
	addTermHour(t, conn, "quake", "JP", prev, 4)
	// coffee: steady, 10 an hour for the day before.
	for h := 2; h <= 25; h++ {
		addTermHour(t, conn, "coffee", "US", cur.Add(-time.Duration(h)*time.Hour), 10)
	}
	addTermHour(t, conn, "coffee", "US", cur, 12)
	// rare: a spike by ratio, but under the minimum of posts.
	addTermHour(t, conn, "rare", "", cur, 3)
	// '' counts every post: never a term.
	addTermHour(t, conn, "", "US", cur, 100)
	// old: its spike is more than a day ago (outside the window).
	addTermHour(t, conn, "old", "US", cur.Add(-30*time.Hour), 50)
	// burst: in the previous hour only, counted for its share.
	addTermHour(t, conn, "burst", "US", prev, 40)

	got, err := db.SpikingTerms(t.Context(), storage.SpikeQuery{Now: now, MinPosts: 5, MinRatio: 3, Limit: 10})
	if err != nil {
		t.Fatalf("spiking terms: %v", err)
	}
	var terms []string
	for _, s := range got {
		terms = append(terms, s.Term)
	}
	// burst: 40 * 3/4 = 30 in the last hour; quake: 10 + 4 * 3/4 = 13.
	if !slices.Equal(terms, []string{"burst", "quake"}) {
		t.Fatalf("spiking terms = %+v", got)
	}
	if q := got[1]; q.LastHour != 13 || q.Baseline != 0 || q.Day != 14 || q.Ratio() != 14 {
		t.Errorf("quake = %+v", q)
	}
	if b := got[0]; b.LastHour != 30 || b.Day != 40 {
		t.Errorf("burst = %+v", b)
	}
	// The baseline is the hourly average of the 24 hours before the
	// previous one: coffee at 12 against 10 is no spike; at 50 it is.
	addTermHour(t, conn, "coffee", "US", cur, 38)
	got, err = db.SpikingTerms(t.Context(), storage.SpikeQuery{Now: now, MinPosts: 5, MinRatio: 3, Limit: 1})
	if err != nil || len(got) != 1 || got[0].Term != "coffee" || got[0].Baseline != 10 || got[0].LastHour != 50 || got[0].Day != 50+22*10 {
		t.Errorf("coffee spike = %+v, %v", got, err)
	}
}

func TestNewsClusterPosts(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	author := factory.User(t, db, nil)
	post := func(text string, opts factory.PostOpts) storage.Post {
		t.Helper()
		opts.Text, opts.Entities = text, posttext.Extract(text)
		if opts.Author.ID == 0 {
			opts.Author = author
		}
		return factory.Post(t, db, &opts)
	}
	hashtag := post("The #Quake was felt far away", factory.PostOpts{})
	word := post("quake again, stay safe", factory.PostOpts{})
	cashtag := post("$NBIS falls after the quake", factory.PostOpts{})
	mention := post("thanks @Rescue_Team for the quake help", factory.PostOpts{})
	post("#quake old news", factory.PostOpts{CreatedAt: time.Now().Add(-30 * time.Hour)})
	deleted := time.Now()
	post("#quake deleted", factory.PostOpts{DeletedAt: &deleted})
	factory.Post(t, db, &factory.PostOpts{RepostOf: hashtag})
	protected := time.Now()
	post("#quake from a protected account", factory.PostOpts{Author: factory.User(t, db, &factory.UserOpts{ProtectedAt: &protected})})
	edited := post("#quake first version", factory.PostOpts{})
	next := edited
	next.Text, next.Terms = "#quake second version", storage.PostTerms{}
	next.Entities = posttext.Extract(next.Text)
	latest, err := db.EditPost(ctx, edited.ID, next, time.Now())
	if err != nil {
		t.Fatalf("edit: %v", err)
	}

	since := time.Now().Add(-24 * time.Hour)
	for term, want := range map[string][]int64{
		"#quake":       {latest.ID, hashtag.ID},
		"quake":        {latest.ID, mention.ID, cashtag.ID, word.ID, hashtag.ID},
		"$nbis":        {cashtag.ID},
		"@rescue_team": {mention.ID},
		"nothing":      nil,
	} {
		posts, err := db.NewsClusterPosts(ctx, storage.ClusterQuery{Term: term, Since: since, Limit: 10})
		if err != nil {
			t.Fatalf("%s: %v", term, err)
		}
		var got []int64
		for _, p := range posts {
			got = append(got, p.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", term, got, want)
		}
	}
	posts, err := db.NewsClusterPosts(ctx, storage.ClusterQuery{Term: "quake", Since: since, Limit: 2})
	if err != nil || len(posts) != 2 || posts[0].Text != "#quake second version" || posts[0].Entities.Hashtags[0].Tag != "quake" {
		t.Errorf("limited = %+v, %v", posts, err)
	}
}

// authorState puts a post's author in state.
func authorState(db *postgres.DB, state string, at time.Time) func(storage.User, storage.Post) error {
	return func(u storage.User, _ storage.Post) error {
		_, err := db.SetUserState(context.Background(), u.ID, state, at)
		return err
	}
}

// TestNewsStoryStaleSources: a story stops being served in the transaction
// that hides one of its sources (post deleted or edited, author protected,
// suspended, deactivated or deleted), and a story written with a source
// already hidden is stored stale.
func TestNewsStoryStaleSources(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	now := time.Now().UTC()
	served := func(id int64) bool {
		t.Helper()
		_, byID := db.NewsStoryByID(ctx, id)
		if byID != nil && !errors.Is(byID, storage.ErrNotFound) {
			t.Fatalf("by id: %v", byID)
		}
		list, err := db.SearchNewsStories(ctx, storage.NewsSearch{Since: now.Add(-time.Hour), Limit: 100})
		if err != nil {
			t.Fatalf("search: %v", err)
		}
		inSearch := slices.ContainsFunc(list, func(s storage.NewsStory) bool { return s.ID == id })
		if inSearch != (byID == nil) {
			t.Errorf("story %d: in search %v, by id %v", id, inSearch, byID)
		}
		return inSearch
	}
	for _, tc := range []struct {
		name string
		hide func(author storage.User, p storage.Post) error
	}{
		{"post deleted", func(_ storage.User, p storage.Post) error { _, err := db.DeletePost(ctx, p.ID, now); return err }},
		{"post edited", func(_ storage.User, p storage.Post) error {
			next := p
			next.Text, next.Terms = "changed", storage.PostTerms{}
			_, err := db.EditPost(ctx, p.ID, next, now)
			return err
		}},
		{"author protected", authorState(db, "protected", now)},
		{"author suspended", authorState(db, "suspended", now)},
		{"author deactivated", authorState(db, "deactivated", now)},
		{"author deleted", authorState(db, "deleted", now)},
	} {
		author, bystander := factory.User(t, db, nil), factory.User(t, db, nil)
		p := factory.Post(t, db, &factory.PostOpts{Author: author, Text: "quake " + tc.name})
		keep := factory.Post(t, db, &factory.PostOpts{Author: bystander, Text: "quake elsewhere"})
		s := newsStory("quake")
		s.Sources, s.SourceAuthors, s.PostIDs = []int64{p.ID, keep.ID}, []int64{author.ID, bystander.ID}, []int64{p.ID}
		story, _, err := db.UpsertNewsStory(ctx, s, now, nil)
		if err != nil || story.StaleAt != nil || !served(story.ID) {
			t.Fatalf("%s: stored %+v, %v", tc.name, story, err)
		}
		if err := tc.hide(author, p); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if served(story.ID) {
			t.Errorf("%s: the story is still served", tc.name)
		}
		stale, err := db.StaleNewsStories(ctx, 100)
		if err != nil || !slices.ContainsFunc(stale, func(x storage.NewsStory) bool { return x.ID == story.ID }) {
			t.Errorf("%s: stale = %+v, %v", tc.name, stale, err)
		}
		srcs, err := db.NewsSources(ctx, story.Sources)
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range srcs {
			if src.Visible != (src.Post.ID == keep.ID) {
				t.Errorf("%s: source %d visible %v", tc.name, src.Post.ID, src.Visible)
			}
		}
		// Written again with the hidden source (a build that read it just
		// before it went): stored stale, still not served.
		again, err := db.RebuildNewsStory(ctx, story, now)
		if err != nil || again.StaleAt == nil || served(story.ID) {
			t.Errorf("%s: rebuilt with the hidden source = %+v, %v", tc.name, again, err)
		}
		// Without it: served again.
		story.Sources = []int64{keep.ID}
		if again, err = db.RebuildNewsStory(ctx, story, now); err != nil || again.StaleAt != nil || !served(story.ID) {
			t.Errorf("%s: rebuilt without it = %+v, %v", tc.name, again, err)
		}
		// Withdrawn: never served nor rebuilt again.
		if err := db.WithdrawNewsStory(ctx, story.ID, now); err != nil || served(story.ID) {
			t.Errorf("%s: withdraw: %v", tc.name, err)
		}
		if _, err := db.RebuildNewsStory(ctx, story, now); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: rebuild of a withdrawn story: %v", tc.name, err)
		}
	}
}
