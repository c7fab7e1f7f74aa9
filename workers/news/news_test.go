package news_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/news"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// env is a database, a connection of the test's own (for the aggregates,
// which the insights worker keeps elsewhere) and a fixed present.
type env struct {
	db   *postgres.DB
	conn *pgx.Conn
	now  time.Time
	user storage.User
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db, dbURL := storagetest.NewDB(t)
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &env{db: db, conn: conn, now: testNow(time.Now().UTC()), user: factory.User(t, db, nil)}
}

// testNow is now, or the next hour's first minute when now is in the last
// five minutes of its hour: the tests count "a minute later" in the same
// hour's aggregates as the first posts (a run at 07:59 once split them).
func testNow(now time.Time) time.Time {
	if now.Add(5*time.Minute).Hour() != now.Hour() {
		return now.Truncate(time.Hour).Add(time.Hour + time.Minute)
	}
	return now
}

// post writes a post with its entities and the counters given, and counts
// it in the aggregates of the present hour, as the insights worker would.
func (e *env) post(t *testing.T, text string, likes int64) storage.Post {
	t.Helper()
	p := factory.Post(t, e.db, &factory.PostOpts{Author: e.user, Text: text, Entities: posttext.Extract(text),
		Metrics: &storage.PostMetrics{Likes: likes}})
	e.count(t, e.now, 1, posttext.KeywordTerms(text)...)
	return p
}

// count adds n posts to the aggregates of terms (and the all-posts term "") at the hour of at,
// in the US and worldwide, as the applier counts them.
func (e *env) count(t *testing.T, at time.Time, n int, terms ...string) {
	t.Helper()
	for _, term := range append([]string{""}, terms...) {
		_, err := e.conn.Exec(t.Context(), `INSERT INTO insight_term_hours (term, country_code, hour, posts) VALUES ($1, 'US', $2, $3), ($1, '*', $2, $3)
			ON CONFLICT (term, country_code, hour) DO UPDATE SET posts = insight_term_hours.posts + EXCLUDED.posts`,
			term, at.UTC().Truncate(time.Hour), n)
		if err != nil {
			t.Fatalf("count %q: %v", term, err)
		}
	}
}

func (e *env) refresher(at time.Time) *news.Refresher {
	return &news.Refresher{Store: e.db, Clock: func() time.Time { return at }}
}

func ids(posts ...storage.Post) []int64 {
	out := make([]int64, len(posts))
	for i, p := range posts {
		out[i] = p.ID
	}
	return out
}

func TestRefreshBuildsAndRefreshesStories(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	// A steady term: 10 posts an hour for the day before, 12 now.
	for h := 2; h <= 25; h++ {
		e.count(t, e.now.Add(-time.Duration(h)*time.Hour), 10, "coffee")
	}
	e.count(t, e.now, 12, "coffee")
	// The quake: eight posts now, none before.
	q := []storage.Post{
		e.post(t, "Strong #Quake shakes the coast near Lima. Buildings swaying everywhere https://example.com/live", 40),
		e.post(t, "Felt the #quake here too, everyone ok? @RescueTeam", 0),
		e.post(t, "Another #Quake aftershock on the coast right now", 5),
		e.post(t, "#quake the whole apartment moved, scary stuff", 0),
		e.post(t, "Power is out after the #Quake, $NBIS servers fine apparently @RescueTeam", 3),
		e.post(t, "My dog knew before the #quake hit the coast", 2),
		e.post(t, "Aftershock again #Quake @rescueteam please check the coast $nbis", 1),
		e.post(t, "Tsunami warning lifted on the coast after #Quake $NBIS", 7),
	}
	// An eclipse: six posts now, a story of its own.
	var eclipse []storage.Post
	for _, text := range []string{"The eclipse is starting", "Eclipse photos from the roof", "clouds ruined the eclipse",
		"eclipse glasses sold out", "watching the eclipse with the kids", "best eclipse in years"} {
		eclipse = append(eclipse, e.post(t, text, 0))
	}
	// A deleted post is never part of a story.
	gone := e.post(t, "#quake gone soon", 100)
	if _, err := e.db.DeletePost(ctx, gone.ID, time.Now()); err != nil {
		t.Fatal(err)
	}

	run, err := e.refresher(e.now).Refresh(ctx)
	if err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if len(run.Stories) != 2 || run.Created != 2 {
		t.Fatalf("stories = %+v", run)
	}
	quake, ecl := run.Stories[0], run.Stories[1]
	// "#quake" and "quake" both count 9 posts ("#quake" first by name):
	// the hashtag leads, its word and "coast" (in 5 of its 8 live posts)
	// join; "quake" leads no story of its own.
	if quake.LeadTerm != "#quake" || !slices.Equal(quake.Keywords, []string{"#quake", "quake", "coast"}) {
		t.Errorf("quake terms = %q, %q", quake.LeadTerm, quake.Keywords)
	}
	if want := "Strong #Quake shakes the coast near Lima."; quake.Name != want {
		t.Errorf("name = %q, want %q", quake.Name, want)
	}
	for _, part := range []string{"9 posts in the last 24 hours mention #Quake, quake and coast", "9 in the last hour",
		"almost none", "(40 interactions)", "“Strong #Quake shakes the coast near Lima. Buildings swaying everywhere”"} {
		if !strings.Contains(quake.Summary, part) {
			t.Errorf("summary %q lacks %q", quake.Summary, part)
		}
	}
	if !strings.HasPrefix(quake.Hook, "#Quake is suddenly everywhere: 9 posts") || quake.Category != "News" || quake.Posts != 9 {
		t.Errorf("hook %q, category %q, posts %d", quake.Hook, quake.Category, quake.Posts)
	}
	// Most engaged first, then newest.
	if want := ids(q[0], q[7], q[2], q[4], q[5], q[6], q[3], q[1]); !slices.Equal(quake.PostIDs, want) {
		t.Errorf("cluster posts = %v, want %v", quake.PostIDs, want)
	}
	c := quake.Contexts
	if !slices.Equal(c.Topics, []string{"Quake"}) || !slices.Equal(c.Finance.Tickers, []string{"NBIS"}) ||
		!slices.Equal(c.Entities.People, []string{"RescueTeam"}) || c.Entities.Organizations == nil || c.Sports.Teams == nil {
		t.Errorf("contexts = %+v", c)
	}
	if ecl.LeadTerm != "eclipse" || !slices.Equal(ecl.Keywords, []string{"eclipse"}) || len(ecl.PostIDs) != 6 ||
		ecl.PostIDs[0] != eclipse[5].ID || ecl.Name != "Best eclipse in years" ||
		!strings.HasPrefix(ecl.Hook, "Eclipse is suddenly everywhere") || !strings.HasSuffix(ecl.Summary, "The latest post reads: “best eclipse in years”") {
		t.Errorf("eclipse story = %+v", ecl)
	}
	stored, err := e.db.NewsStoryByID(ctx, quake.ID)
	if err != nil || stored.Name != quake.Name || !slices.Equal(stored.PostIDs, quake.PostIDs) {
		t.Errorf("stored = %+v, %v", stored, err)
	}

	// A minute later, more quake posts: the same story, refreshed.
	later := e.now.Add(time.Minute)
	e.now = later
	viral := e.post(t, "Video of the #Quake hitting the harbour", 500)
	e.post(t, "#quake relief donations open", 0)
	run, err = e.refresher(later).Refresh(ctx)
	if err != nil {
		t.Fatalf("second refresh: %v", err)
	}
	if len(run.Stories) != 2 || run.Created != 0 {
		t.Fatalf("second run = %+v", run)
	}
	again := run.Stories[0]
	if again.ID != quake.ID || !again.CreatedAt.Equal(quake.CreatedAt) || !again.UpdatedAt.Equal(later.Truncate(time.Microsecond)) ||
		again.PostIDs[0] != viral.ID || len(again.PostIDs) != storage.NewsClusterResults || again.Posts != 11 ||
		again.Name != "Video of the #Quake hitting the harbour" {
		t.Errorf("refreshed = %+v (first %+v)", again, quake)
	}
	// coast is in 5 of 10 posts: still in.
	if !slices.Equal(again.Keywords, []string{"#quake", "quake", "coast"}) {
		t.Errorf("refreshed keywords = %q", again.Keywords)
	}
}

func TestRefreshWithoutSpike(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Steady: as many posts an hour the day before as now.
	for h := 2; h <= 25; h++ {
		e.count(t, e.now.Add(-time.Duration(h)*time.Hour), 8, posttext.KeywordTerms("#weather is nice today")...)
	}
	for range 8 {
		e.post(t, "#weather is nice today", 0)
	}
	// Spiking only in stopwords and short words, and under the minimum.
	e.count(t, e.now, 50, "the", "ok", "2025")
	for range 4 {
		e.post(t, "rare words here", 0)
	}
	run, err := e.refresher(e.now).Refresh(t.Context())
	if err != nil || len(run.Stories) != 0 || run.Spiking != 0 {
		t.Fatalf("run = %+v, %v; want no story", run, err)
	}
	list, err := e.db.SearchNewsStories(t.Context(), storage.NewsSearch{Since: e.now.Add(-time.Hour), Limit: 10})
	if err != nil || len(list) != 0 {
		t.Errorf("stories = %+v, %v", list, err)
	}
	// Spiking terms whose posts are gone make no story either.
	e.count(t, e.now, 20, "phantom")
	if run, err := e.refresher(e.now).Refresh(t.Context()); err != nil || run.Spiking != 1 || len(run.Stories) != 0 {
		t.Errorf("phantom run = %+v, %v", run, err)
	}
}

func TestProcessTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for range 5 {
		e.post(t, "#launch day for the rocket", 0)
	}
	if err := e.refresher(e.now).ProcessTask(t.Context(), tasks.NewNewsRefresh()); err != nil {
		t.Fatalf("process: %v", err)
	}
	list, err := e.db.SearchNewsStories(t.Context(), storage.NewsSearch{Words: []string{"rocket"}, Since: e.now.Add(-time.Hour), Limit: 10})
	if err != nil || len(list) != 1 || list[0].LeadTerm != "#launch" {
		t.Errorf("stories = %+v, %v", list, err)
	}
}

func TestEligible(t *testing.T) {
	t.Parallel()
	for term, want := range map[string]bool{
		"": false, "the": false, "de": false, "ok": false, "2025": false, "#ai": true, "#a": false, "$ge": true,
		"@bo": true, "quake": true, "g7": false, "covid19": true,
	} {
		if got := news.Eligible(term); got != want {
			t.Errorf("Eligible(%q) = %v, want %v", term, got, want)
		}
	}
}

// queue records enqueued tasks and answers a conflict while one is held.
type queue struct {
	tasks []*asynq.Task
	held  bool
}

func (q *queue) EnqueueContext(_ context.Context, task *asynq.Task, _ ...asynq.Option) (*asynq.TaskInfo, error) {
	if q.held {
		return nil, asynq.ErrTaskIDConflict
	}
	q.tasks = append(q.tasks, task)
	q.held = true
	return &asynq.TaskInfo{}, nil
}

// inspector reports the held task in state and records deletions.
type inspector struct {
	state   asynq.TaskState
	deleted []string
}

func (i *inspector) GetTaskInfo(queue, id string) (*asynq.TaskInfo, error) {
	return &asynq.TaskInfo{Queue: queue, ID: id, State: i.state, LastErr: "boom"}, nil
}

func (i *inspector) DeleteTask(queue, id string) error {
	i.deleted = append(i.deleted, queue+"/"+id)
	return nil
}

func TestSchedule(t *testing.T) {
	t.Parallel()
	q, in := &queue{}, &inspector{state: asynq.TaskStateActive}
	s := news.NewSweeper(q, in, nil, 0, nil)
	if s.Interval != news.Interval || !s.Routine {
		t.Errorf("interval = %v", s.Interval)
	}
	tick := func() {
		t.Helper()
		if err := s.Tick(t.Context()); err != nil {
			t.Fatalf("tick: %v", err)
		}
	}
	tick()
	if len(q.tasks) != 1 || q.tasks[0].Type() != tasks.TypeNewsRefresh {
		t.Fatalf("enqueued = %v", q.tasks)
	}
	// While the run is active (or queued), ticks change nothing.
	tick()
	if len(q.tasks) != 1 || len(in.deleted) != 0 {
		t.Errorf("tick while running: %d tasks, deleted %v", len(q.tasks), in.deleted)
	}
	// A run that ran out of retries is removed for the next tick.
	in.state = asynq.TaskStateArchived
	tick()
	if !slices.Equal(in.deleted, []string{tasks.QueueInsights + "/" + tasks.NewsRefreshTaskID}) {
		t.Errorf("deleted = %v", in.deleted)
	}
	q.held = false // the run ended: no retention frees the id
	tick()
	if len(q.tasks) != 2 {
		t.Errorf("enqueued after the run = %d tasks", len(q.tasks))
	}
	var _ sweep.Source[string] = news.Schedule(nil, nil)
}

// TestRefreshRebuildsStoriesWhoseSourcesGo: a story never shows a post
// that is no longer visible. Once a source goes (its author protected, the
// post deleted, the author suspended) the story is not served; the next
// run rebuilds it from the sources still visible, even when its terms no
// longer spike, and withdraws it when none remains.
func TestRefreshRebuildsStoriesWhoseSourcesGo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := t.Context()
	other := factory.User(t, e.db, nil)
	postBy := func(author storage.User, text string, likes int64) storage.Post {
		p := factory.Post(t, e.db, &factory.PostOpts{Author: author, Text: text, Entities: posttext.Extract(text),
			Metrics: &storage.PostMetrics{Likes: likes}})
		e.count(t, e.now, 1, posttext.KeywordTerms(text)...)
		return p
	}
	top := postBy(other, "Strong #Quake shakes Lima harbour. Cranes down $NBIS", 40)
	second := postBy(e.user, "Felt the #quake in Callao, $NBIS traders nervous", 9)
	rest := []storage.Post{
		postBy(e.user, "#quake the whole apartment moved", 3),
		postBy(e.user, "My dog knew before the #quake hit", 2),
		postBy(e.user, "Aftershock again #Quake tonight", 1),
		postBy(e.user, "Relief donations open after the #quake", 0),
	}
	run, err := e.refresher(e.now).Refresh(ctx)
	if err != nil || len(run.Stories) != 1 {
		t.Fatalf("refresh = %+v, %v", run, err)
	}
	story := run.Stories[0]
	if !strings.Contains(story.Name, "Lima") || !strings.Contains(story.Summary, "Lima") || story.Posts != 6 ||
		!slices.Equal(story.Contexts.Finance.Tickers, []string{"NBIS"}) || len(story.Sources) != 6 {
		t.Fatalf("story = %+v", story)
	}
	// Nothing spikes any more: only the stale stories are rebuilt.
	quiet := &news.Refresher{Store: e.db, Clock: func() time.Time { return e.now }, MinRatio: 1e9}
	hide := func(what string, sql string, args ...any) {
		t.Helper()
		if _, err := e.conn.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		// At once, in the transaction that hid the source: neither found by
		// id nor searched.
		if _, err := e.db.NewsStoryByID(ctx, story.ID); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("after %s: by id %v, want ErrNotFound", what, err)
		}
		list, err := e.db.SearchNewsStories(ctx, storage.NewsSearch{Words: []string{"quake"}, Since: e.now.Add(-time.Hour), Limit: 10})
		if err != nil || len(list) != 0 {
			t.Errorf("after %s: search = %+v, %v", what, list, err)
		}
	}

	hide("protecting the top post's author", `UPDATE users SET protected_at = now() WHERE id = $1`, other.ID)
	run, err = quiet.Refresh(ctx)
	if err != nil || len(run.Rebuilt) != 1 || run.Withdrawn != 0 || len(run.Stories) != 0 {
		t.Fatalf("rebuild run = %+v, %v", run, err)
	}
	got, err := e.db.NewsStoryByID(ctx, story.ID)
	if err != nil {
		t.Fatalf("rebuilt story: %v", err)
	}
	if strings.Contains(got.Name+got.Summary+got.Hook, "Lima") || slices.Contains(got.PostIDs, top.ID) ||
		slices.Contains(got.Sources, top.ID) || got.PostIDs[0] != second.ID || !strings.Contains(got.Name, "Callao") {
		t.Errorf("rebuilt story still shows the hidden post: %+v", got)
	}
	// NBIS is in 1 of the 5 posts left: under the share, out of contexts.
	if got.Posts != 5 || !strings.HasPrefix(got.Summary, "5 posts in the last 24 hours") || len(got.Contexts.Finance.Tickers) != 0 {
		t.Errorf("rebuilt counts and contexts: posts %d, summary %q, contexts %+v", got.Posts, got.Summary, got.Contexts)
	}

	hide("deleting the top post", `UPDATE posts SET deleted_at = now() WHERE id = $1`, second.ID)
	if run, err = quiet.Refresh(ctx); err != nil || len(run.Rebuilt) != 1 {
		t.Fatalf("second rebuild = %+v, %v", run, err)
	}
	got, err = e.db.NewsStoryByID(ctx, story.ID)
	if err != nil || strings.Contains(got.Name+got.Summary, "Callao") || !slices.Equal(got.PostIDs, ids(rest...)) || got.Posts != 4 {
		t.Errorf("after the delete: %+v, %v", got, err)
	}

	hide("suspending the last author", `UPDATE users SET suspended_at = now() WHERE id = $1`, e.user.ID)
	if run, err = quiet.Refresh(ctx); err != nil || run.Withdrawn != 1 || len(run.Rebuilt) != 0 {
		t.Fatalf("withdraw run = %+v, %v", run, err)
	}
	if _, err := e.db.NewsStoryByID(ctx, story.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("withdrawn story by id: %v", err)
	}
	// Withdrawn for good: making the authors public again brings five posts
	// back, but a new build makes a new story.
	if _, err := e.conn.Exec(ctx, `UPDATE users SET suspended_at = NULL, protected_at = NULL WHERE id = ANY($1)`,
		[]int64{e.user.ID, other.ID}); err != nil {
		t.Fatal(err)
	}
	run, err = e.refresher(e.now).Refresh(ctx)
	if err != nil || len(run.Stories) != 1 || run.Stories[0].ID == story.ID || run.Created != 1 {
		t.Errorf("after the withdrawal: %+v, %v", run, err)
	}
}
