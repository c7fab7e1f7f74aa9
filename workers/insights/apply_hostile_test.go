package insights

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// emptyWorld is a world with no generated corpus.
func emptyWorld(t *testing.T) *world {
	t.Helper()
	db, pool := storagetest.NewDBWithPool(t)
	return &world{db: db, pool: pool}
}

// Hostile: an edit keeps its post in its hour, and docs/insights.md says a
// post's country "is fixed when the post is written ... A later profile
// change does not move old posts". EditPost inserts the new version without
// a country, so the posts_country trigger recomputes it from the author's
// profile at edit time: editing moves the post to the author's new country.
func TestHostileEditKeepsCountry(t *testing.T) {
	t.Parallel()
	w := emptyWorld(t)
	ctx := t.Context()
	u := factory.User(t, w.db, &factory.UserOpts{Profile: storage.Profile{CountryCode: "US"}})
	p := factory.Post(t, w.db, &factory.PostOpts{Author: u, Text: "hostilecountry original"})
	gb := "GB"
	if _, err := w.db.SetUserProfile(ctx, u.ID, postgres.ProfileChange{CountryCode: &gb}); err != nil {
		t.Fatal(err)
	}
	factory.Edit(t, w.db, p, "hostilecountry edited")
	drain(t, &Applier{Store: w.db, Counter: Counter{PairSample: 1}, Logger: quiet})

	hour := p.CreatedAt.UTC().Truncate(time.Hour)
	got := w.hours(t)
	if n := got[storage.TermHourKey{Term: "hostilecountry", CountryCode: "US", Hour: hour}]; n != 1 {
		t.Errorf("after the author moved to GB and edited a US post, the post counts %d time(s) in US, want 1 (the country is fixed when written)", n)
	}
	if n := got[storage.TermHourKey{Term: "hostilecountry", CountryCode: "GB", Hour: hour}]; n != 0 {
		t.Errorf("the edited US post counts %d time(s) in GB, want 0", n)
	}
}

// Hostile: docs/insights.md says the log covers "the row deleted, e.g. with
// its user". When a user row is deleted, the cascade deletes every version
// of an edited post in one statement; the AFTER DELETE trigger of the
// latest version then computes insight_posted_at(edit_root_id, ...) with the
// root already gone and falls back to the version's own created_at. The -1
// lands in the edit's hour while the +1 was in the root's hour: the root's
// hour keeps the post forever, and the edit's hour loses one (another post's,
// or a bucket dropped at <= 0).
func TestHostileUserRowDeletedWithEditAcrossHours(t *testing.T) {
	t.Parallel()
	w := emptyWorld(t)
	ctx := t.Context()
	u := factory.User(t, w.db, &factory.UserOpts{Profile: storage.Profile{CountryCode: "US"}})
	h := time.Now().UTC().Truncate(time.Hour).Add(-5 * time.Hour)
	root := factory.Post(t, w.db, &factory.PostOpts{Author: u, Text: "hostilecascade original", CreatedAt: h.Add(-time.Minute)})
	next := root
	next.Text, next.Entities, next.Terms = "hostilecascade edited", storage.Entities{}, storage.PostTerms{}
	if _, err := w.db.EditPost(ctx, root.ID, next, h.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Another user's post in the edit's hour, which the wrong -1 eats.
	other := factory.User(t, w.db, &factory.UserOpts{Profile: storage.Profile{CountryCode: "US"}})
	o := factory.Post(t, w.db, &factory.PostOpts{Author: other, Text: "hostilecascade bystander", CreatedAt: h.Add(10 * time.Minute)})
	_ = o
	a := &Applier{Store: w.db, Counter: Counter{PairSample: 1}, Logger: quiet}
	drain(t, a)

	if _, err := w.pool.Exec(ctx, `DELETE FROM users WHERE id = $1`, u.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, a)
	want, got := w.direct(t), w.hours(t)
	if !equalMaps(got, want) {
		t.Errorf("after deleting a user row (cascade) the term hours differ from a direct count:\n%s", diff(got, want))
	}
}

// Hostile: a keyword that is also a negative keyword can match no post, yet
// when the keyword's posts are not in the pairs sample (days(k) = 0, the
// factor stays 1) the exact count is returned as if there were no negative.
func TestHostileKeywordEqualsNegativeKeyword(t *testing.T) {
	t.Parallel()
	w := emptyWorld(t)
	c := Counter{PairSample: 16}
	u := factory.User(t, w.db, &factory.UserOpts{Profile: storage.Profile{CountryCode: "US"}})
	var p storage.Post
	for range 64 {
		p = factory.Post(t, w.db, &factory.PostOpts{Author: u, Text: "hostileselfneg"})
		if !c.Sampled(p.ID) {
			break
		}
		if _, err := w.db.DeletePost(t.Context(), p.ID, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, &Applier{Store: w.db, Counter: c, Logger: quiet})
	hour := p.CreatedAt.UTC().Truncate(time.Hour)
	got, err := w.db.KeywordVolumes(t.Context(), storage.InsightQuery{Keywords: []string{"hostileselfneg"},
		NegativeKeywords: []string{"hostileselfneg"}, Start: hour, End: hour.Add(time.Hour), Granularity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != 0 {
		t.Errorf("keywords=hostileselfneg&negative_keywords=hostileselfneg: volumes %v, want [0]", got)
	}
}
