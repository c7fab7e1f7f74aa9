package insights

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// world is a generated corpus: users in several countries (and one with
// none), a place in another country, posts over several hours, with
// reposts, edits and deletions mixed in.
type world struct {
	db    *postgres.DB
	pool  *pgxpool.Pool
	rng   *rand.Rand
	users []storage.User
	posts []storage.Post // live originals, latest versions
	start time.Time
}

var vocabulary = strings.Fields("golang rust release launch #golang #rust $ACME @gopher the and " +
	"compiler generics memory safety crowd stadium goal match rain storm")

func newWorld(t *testing.T) *world {
	t.Helper()
	db, pool := storagetest.NewDBWithPool(t)
	w := &world{db: db, pool: pool, rng: rand.New(rand.NewPCG(7, 11)),
		start: time.Now().UTC().Truncate(time.Hour).Add(-30 * time.Hour)}
	if err := db.SetPlace(t.Context(), storage.Place{ID: "tokyo-1", CountryCode: "JP", FullName: "Tokyo"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"US", "US", "GB", "BR", "", "FR"} {
		w.users = append(w.users, factory.User(t, db, &factory.UserOpts{Profile: storage.Profile{CountryCode: c}}))
	}
	w.add(t, 60)
	return w
}

// add writes n posts, a few of them placed in Tokyo, some reposts.
func (w *world) add(t *testing.T, n int) {
	t.Helper()
	for range n {
		author := w.users[w.rng.IntN(len(w.users))]
		if len(w.posts) > 0 && w.rng.IntN(8) == 0 {
			factory.Post(t, w.db, &factory.PostOpts{Author: author, RepostOf: w.posts[w.rng.IntN(len(w.posts))]})
			continue
		}
		var words []string
		for range 2 + w.rng.IntN(6) {
			words = append(words, vocabulary[w.rng.IntN(len(vocabulary))])
		}
		opts := &factory.PostOpts{Author: author, Text: strings.Join(words, " ")}
		if w.rng.IntN(4) > 0 { // the others are posted now, and may be edited
			opts.CreatedAt = w.start.Add(time.Duration(w.rng.IntN(30*60)) * time.Minute)
		}
		if w.rng.IntN(6) == 0 {
			opts.PlaceID = "tokyo-1"
		}
		w.posts = append(w.posts, factory.Post(t, w.db, opts))
	}
}

// churn moves an author to another country (their posts, edited or not,
// stay where they were written), protects one author and suspends then
// reinstates another, deletes the French one with all their posts (once),
// then edits and deletes some live posts.
func (w *world) churn(t *testing.T) {
	t.Helper()
	ctx := t.Context()
	gb := "GB"
	if _, err := w.db.SetUserProfile(ctx, w.users[0].ID, postgres.ProfileChange{CountryCode: &gb}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.pool.Exec(ctx, `UPDATE users SET protected_at = now() WHERE id = $1`, w.users[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.pool.Exec(ctx, `UPDATE users SET suspended_at = now() WHERE id = $1`, w.users[2].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := w.pool.Exec(ctx, `UPDATE users SET suspended_at = NULL WHERE id = $1`, w.users[2].ID); err != nil {
		t.Fatal(err)
	}
	if len(w.users) > 5 {
		gone := w.users[5].ID
		if _, err := w.pool.Exec(ctx, `DELETE FROM users WHERE id = $1`, gone); err != nil {
			t.Fatal(err)
		}
		w.users = w.users[:5]
		w.posts = slices.DeleteFunc(w.posts, func(p storage.Post) bool { return p.AuthorID == gone })
	}
	for i := 0; i < len(w.posts); i++ {
		switch w.rng.IntN(6) {
		case 0:
			if _, err := w.db.DeletePost(t.Context(), w.posts[i].ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			w.posts = append(w.posts[:i], w.posts[i+1:]...)
			i--
		case 1:
			if time.Since(w.posts[i].CreatedAt) > 10*time.Minute {
				continue
			}
			w.posts[i] = factory.Edit(t, w.db, w.posts[i], w.posts[i].Text+" edited golang")
		}
	}
}

// direct counts the live originals of public authors straight from the
// posts and users tables: terms per country and hour of the edit chain's
// first version.
func (w *world) direct(t *testing.T) map[storage.TermHourKey]int {
	t.Helper()
	rows, err := w.pool.Query(t.Context(), `SELECT p.text, r.country_code, r.created_at
		FROM posts p JOIN posts r ON r.id = p.edit_root_id JOIN users u ON u.id = p.author_id
		WHERE p.repost_of_id IS NULL AND p.deleted_at IS NULL AND p.superseded_at IS NULL
		  AND u.protected_at IS NULL AND u.suspended_at IS NULL AND u.deactivated_at IS NULL AND u.deleted_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[storage.TermHourKey]int{}
	for rows.Next() {
		var text, country string
		var at time.Time
		if err := rows.Scan(&text, &country, &at); err != nil {
			t.Fatal(err)
		}
		hour := at.UTC().Truncate(time.Hour)
		for _, c := range []string{country, storage.AllCountries} {
			want[storage.TermHourKey{CountryCode: c, Hour: hour}]++
			for _, term := range posttext.KeywordTerms(text) {
				want[storage.TermHourKey{Term: term, CountryCode: c, Hour: hour}]++
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return want
}

// rebuilt is what the pairs and days hold when computed afresh from the
// live posts.
func (w *world) rebuilt(t *testing.T, c Counter) (map[storage.TermPairKey]int, map[storage.TermDayKey]int) {
	t.Helper()
	rows, err := w.pool.Query(t.Context(), `SELECT p.id, p.text, r.country_code, r.created_at
		FROM posts p JOIN posts r ON r.id = p.edit_root_id JOIN users u ON u.id = p.author_id
		WHERE p.repost_of_id IS NULL AND p.deleted_at IS NULL AND p.superseded_at IS NULL
		  AND u.protected_at IS NULL AND u.suspended_at IS NULL AND u.deactivated_at IS NULL AND u.deleted_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var changes []storage.InsightChange
	for rows.Next() {
		ch := storage.InsightChange{Delta: 1}
		if err := rows.Scan(&ch.PostID, &ch.Text, &ch.CountryCode, &ch.PostedAt); err != nil {
			t.Fatal(err)
		}
		changes = append(changes, ch)
	}
	d := c.Deltas(changes)
	pairs, days := map[storage.TermPairKey]int{}, map[storage.TermDayKey]int{}
	for k, n := range d.Pairs {
		if n != 0 {
			pairs[k] = n
		}
	}
	for k, n := range d.Days {
		if n != 0 {
			days[k] = n
		}
	}
	return pairs, days
}

// readCounts reads an aggregate table: sql selects the key columns then
// the count; key scans a row's key columns into k's fields.
func readCounts[K comparable](t *testing.T, pool *pgxpool.Pool, sql string, key func(k *K) []any) map[K]int {
	t.Helper()
	rows, err := pool.Query(t.Context(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[K]int{}
	for rows.Next() {
		var k K
		var n int
		if err := rows.Scan(append(key(&k), &n)...); err != nil {
			t.Fatal(err)
		}
		got[k] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

// The aggregates' times are read without a zone, which pgx reads as UTC
// (the keys the Counter builds).
const utcDay = `day::timestamp`

func (w *world) hours(t *testing.T) map[storage.TermHourKey]int {
	return readCounts(t, w.pool, `SELECT term, country_code, hour AT TIME ZONE 'UTC', posts FROM insight_term_hours`,
		func(k *storage.TermHourKey) []any { return []any{&k.Term, &k.CountryCode, &k.Hour} })
}

func (w *world) pairs(t *testing.T) map[storage.TermPairKey]int {
	return readCounts(t, w.pool, `SELECT term, country_code, `+utcDay+`, co_term, posts FROM insight_term_pairs`,
		func(k *storage.TermPairKey) []any { return []any{&k.Term, &k.CountryCode, &k.Day, &k.CoTerm} })
}

func (w *world) days(t *testing.T) map[storage.TermDayKey]int {
	return readCounts(t, w.pool, `SELECT term, country_code, `+utcDay+`, posts FROM insight_term_days`,
		func(k *storage.TermDayKey) []any { return []any{&k.Term, &k.CountryCode, &k.Day} })
}

func (w *world) backlog(t *testing.T) int64 {
	t.Helper()
	n, _, err := w.db.InsightBacklog(t.Context(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// check compares the aggregates with the direct count and the rebuilt
// pairs and days.
func (w *world) check(t *testing.T, c Counter) {
	t.Helper()
	want, got := w.direct(t), w.hours(t)
	if !equalMaps(got, want) {
		t.Errorf("term hours differ from a direct count over the posts:\n%s", diff(got, want))
	}
	wantPairs, wantDays := w.rebuilt(t, c)
	if gotPairs := w.pairs(t); !equalMaps(gotPairs, wantPairs) {
		t.Errorf("term pairs differ from a rebuild:\n%s", diff(gotPairs, wantPairs))
	}
	if gotDays := w.days(t); !equalMaps(gotDays, wantDays) {
		t.Errorf("term days differ from a rebuild:\n%s", diff(gotDays, wantDays))
	}
	countries := map[string]bool{}
	for k := range want {
		countries[k.CountryCode] = true
	}
	for _, c := range []string{"US", "GB", "BR", "JP", "", storage.AllCountries} {
		if !countries[c] {
			t.Errorf("the corpus has no post in country %q; the test covers less than it should", c)
		}
	}
}

func diff[K comparable](got, want map[K]int) string {
	var b strings.Builder
	for k, v := range want {
		if got[k] != v {
			fmt.Fprintf(&b, "  %+v: got %d, want %d\n", k, got[k], v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  %+v: got %d, want none\n", k, v)
		}
	}
	return b.String()
}

func TestApplyMatchesDirectCount(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, sample := range []uint64{1, 3} {
		t.Run(fmt.Sprintf("pair sample %d", sample), func(t *testing.T) {
			c := Counter{PairSample: sample, PairTerms: 4}
			if _, err := w.pool.Exec(t.Context(), `TRUNCATE insight_term_hours, insight_term_pairs, insight_term_days, insight_changes;
				INSERT INTO insight_changes (post_id, delta, posted_at, country_code, text)
				SELECT id, 1, posted_at, country_code, text FROM insight_counted_posts`); err != nil {
				t.Fatal(err)
			}
			a := &Applier{Store: w.db, Counter: c, BatchSize: 7, Logger: quiet}
			drain(t, a)
			w.check(t, c)

			w.churn(t)
			w.add(t, 30)
			drain(t, a)
			w.check(t, c)
		})
	}
}

// TestApplyWorkerKilledMidBatch kills the applying connection after it
// wrote a batch and before it committed (as a worker dying there would):
// the batch is applied again by the next run, once.
func TestApplyWorkerKilledMidBatch(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	c := Counter{PairSample: 1}
	before := w.backlog(t)
	kills := 0
	a := &Applier{Store: w.db, Counter: c, BatchSize: 10, Logger: quiet, afterWrite: func(ctx context.Context) error {
		if kills > 0 {
			return nil
		}
		kills++
		// The applying backend is the one holding the applier's lock in
		// this test's database (other databases' appliers are not ours).
		_, err := w.pool.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND ((classid::bigint << 32) | objid::bigint) = $1
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, insightsLockKey)
		return err
	}}
	if _, err := a.Drain(t.Context()); err == nil {
		t.Fatal("Drain succeeded on a connection killed mid-batch")
	}
	if got := w.backlog(t); got != before {
		t.Fatalf("after the kill the log holds %d changes, want all %d back", got, before)
	}
	if got := w.hours(t); len(got) != 0 {
		t.Fatalf("the killed batch left %d term hours behind", len(got))
	}
	drain(t, a)
	w.check(t, c)
}

// TestApplyConcurrentWorkers runs several appliers at once while posts
// arrive: each batch is applied by one of them, once.
func TestApplyConcurrentWorkers(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	c := Counter{PairSample: 2}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 3 {
		wg.Go(func() {
			a := &Applier{Store: w.db, Counter: c, BatchSize: 5, Logger: quiet}
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := a.Drain(context.Background()); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	w.add(t, 40)
	w.churn(t)
	close(stop)
	wg.Wait()
	drain(t, &Applier{Store: w.db, Counter: c, Logger: quiet})
	w.check(t, c)
}

var quiet = slog.New(slog.DiscardHandler)

func drain(t *testing.T, a *Applier) {
	t.Helper()
	for {
		if _, err := a.Drain(t.Context()); err != nil {
			t.Fatal(err)
		}
		ok, err := a.Store.HasInsightChanges(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
	}
}
