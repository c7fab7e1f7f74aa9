package factory_test

import (
	"cmp"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

var (
	t0 = time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)
	t1 = t0.Add(time.Minute)
	t2 = t0.Add(2 * time.Minute)
)

func TestApp(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	tests := []struct {
		name         string
		opts         *factory.AppOpts
		wantName     string // "" means any "app-<random>"
		wantCallback string
	}{
		{"nil options", nil, "", ""},
		{"zero options", &factory.AppOpts{}, "", ""},
		{"name and callback", &factory.AppOpts{Name: "birdwatch", CallbackURL: "https://example.com/cb"}, "birdwatch", "https://example.com/cb"},
		{"enterprise", &factory.AppOpts{Tier: storage.TierEnterprise}, "", ""},
	}
	seen := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := factory.App(t, db, tt.opts)
			if tt.wantName == "" && !regexp.MustCompile(`^app-[0-9a-f]{10}$`).MatchString(app.Name) ||
				tt.wantName != "" && app.Name != tt.wantName {
				t.Errorf("name = %q, want %q (or app-<random>)", app.Name, tt.wantName)
			}
			if seen[app.Name] {
				t.Errorf("name %q given twice", app.Name)
			}
			seen[app.Name] = true
			wantTier := storage.TierSelfServe
			if tt.opts != nil && tt.opts.Tier != "" {
				wantTier = tt.opts.Tier
			}
			if app.ID <= 0 || app.CallbackURL != tt.wantCallback || app.ConsumerKey == "" || app.ConsumerSecret == "" || app.Tier != wantTier {
				t.Errorf("App = %+v", app)
			}
			stored, err := db.AppByName(t.Context(), app.Name)
			if err != nil || stored != app {
				t.Errorf("stored app = %+v, %v; want %+v", stored, err, app)
			}

			tok := factory.BearerToken(t, db, app)
			header := factory.BearerHeader(t, db, app)
			for _, token := range []string{tok.Token, strings.TrimPrefix(header, "Bearer ")} {
				if got, err := db.AppByBearerToken(t.Context(), token); err != nil || got.ID != app.ID {
					t.Errorf("AppByBearerToken(%q) = app %d, %v; want %d", token, got.ID, err, app.ID)
				}
			}
			if tok.AppID != app.ID || !strings.HasPrefix(header, "Bearer ") || header == "Bearer "+tok.Token {
				t.Errorf("BearerToken = %+v, BearerHeader = %q; want two distinct tokens of app %d", tok, header, app.ID)
			}
		})
	}
}

func TestUser(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	past := time.Date(2020, 1, 2, 3, 4, 5, 678_000, time.UTC)
	type stamps struct{ protected, suspended, deactivated, deleted *time.Time }
	tests := []struct {
		name         string
		opts         *factory.UserOpts
		wantUsername string // "" means any user_<random>
		wantName     string // "" means "Name of <username>"
		wantCreated  time.Time
		want         stamps
		wantProfile  storage.Profile
	}{
		{name: "nil options"},
		{name: "zero options", opts: &factory.UserOpts{}},
		{name: "username", opts: &factory.UserOpts{Username: "Alice"}, wantUsername: "Alice"},
		{name: "username and name", opts: &factory.UserOpts{Username: "bob", Name: "Bob B."}, wantUsername: "bob", wantName: "Bob B."},
		{name: "created in the past", opts: &factory.UserOpts{CreatedAt: past}, wantCreated: past},
		{name: "protected", opts: &factory.UserOpts{ProtectedAt: &t0}, want: stamps{protected: &t0}},
		{name: "suspended", opts: &factory.UserOpts{SuspendedAt: &t0}, want: stamps{suspended: &t0}},
		{name: "deactivated", opts: &factory.UserOpts{DeactivatedAt: &t1}, want: stamps{deactivated: &t1}},
		{name: "deleted", opts: &factory.UserOpts{DeletedAt: &t2}, want: stamps{deleted: &t2}},
		{
			name: "every state, created in the past",
			opts: &factory.UserOpts{CreatedAt: past, ProtectedAt: &t0, SuspendedAt: &t1, DeactivatedAt: &t2, DeletedAt: &t0},
			want: stamps{&t0, &t1, &t2, &t0}, wantCreated: past,
		},
		{
			name: "profile",
			opts: &factory.UserOpts{Profile: storage.Profile{Description: "d", Location: "l", URL: "https://u", ProfileImageURL: "https://i",
				CountryCode: "pt", Verified: true, Premium: true}},
			wantProfile: storage.Profile{Description: "d", Location: "l", URL: "https://u", ProfileImageURL: "https://i",
				CountryCode: "PT", Verified: true, Premium: true},
		},
		{name: "premium only", opts: &factory.UserOpts{Profile: storage.Profile{Premium: true}}, wantProfile: storage.Profile{Premium: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now()
			u := factory.User(t, db, tt.opts)
			if tt.wantUsername == "" && !regexp.MustCompile(`^user_[0-9a-f]{10}$`).MatchString(u.Username) ||
				tt.wantUsername != "" && u.Username != tt.wantUsername {
				t.Errorf("username = %q, want %q (or user_<random>)", u.Username, tt.wantUsername)
			}
			if wantName := cmp.Or(tt.wantName, "Name of "+u.Username); u.Name != wantName {
				t.Errorf("name = %q, want %q", u.Name, wantName)
			}
			if tt.wantCreated.IsZero() {
				checkRecent(t, "created_at", u.CreatedAt, before)
			} else if !u.CreatedAt.Equal(tt.wantCreated) {
				t.Errorf("created_at = %v, want %v", u.CreatedAt, tt.wantCreated)
			}
			checkStamp(t, "protected_at", u.ProtectedAt, tt.want.protected)
			checkStamp(t, "suspended_at", u.SuspendedAt, tt.want.suspended)
			checkStamp(t, "deactivated_at", u.DeactivatedAt, tt.want.deactivated)
			checkStamp(t, "deleted_at", u.DeletedAt, tt.want.deleted)
			if u.Profile != tt.wantProfile {
				t.Errorf("profile = %+v, want %+v", u.Profile, tt.wantProfile)
			}
			if stored, err := db.UserByID(t.Context(), u.ID); err != nil || describeUser(stored) != describeUser(u) {
				t.Errorf("stored user = %+v, %v; want %+v", stored, err, u)
			}
		})
	}
}

func TestAccessToken(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	tests := []struct {
		name, level, want string
	}{
		{"default", "", storage.AccessReadWrite},
		{"read", storage.AccessRead, storage.AccessRead},
		{"read-write", storage.AccessReadWrite, storage.AccessReadWrite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := factory.User(t, db, nil)
			tok := factory.AccessToken(t, db, app, u, tt.level)
			if tok.AppID != app.ID || tok.UserID != u.ID || tok.AccessLevel != tt.want || tok.Secret == "" {
				t.Errorf("AccessToken = %+v; want a %s token of app %d and user %d", tok, tt.want, app.ID, u.ID)
			}
			if stored, err := db.AccessToken(t.Context(), tok.Token); err != nil || stored != tok {
				t.Errorf("stored token = %+v, %v; want %+v", stored, err, tok)
			}
			if again := factory.AccessToken(t, db, app, u, tt.level); again != tok {
				t.Errorf("second AccessToken = %+v, want the same %+v", again, tok)
			}
		})
	}
}

func TestPost(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice"})
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name        string
		opts        *factory.PostOpts
		wantAuthor  int64 // 0 means a new user
		wantApp     int64
		wantText    string // "" means any "post <random>"
		wantPaid    bool
		wantCreated time.Time // zero means about now
		wantDeleted *time.Time
	}{
		{name: "nil options"},
		{name: "author and app", opts: &factory.PostOpts{Author: alice, App: app}, wantAuthor: alice.ID, wantApp: app.ID},
		{name: "text, paid", opts: &factory.PostOpts{Author: alice, Text: "hello", PaidPartnership: true}, wantAuthor: alice.ID, wantText: "hello", wantPaid: true},
		{name: "created in the past", opts: &factory.PostOpts{Author: alice, CreatedAt: past}, wantAuthor: alice.ID, wantCreated: past},
		{name: "deleted", opts: &factory.PostOpts{Author: alice, DeletedAt: &t0}, wantAuthor: alice.ID, wantDeleted: &t0},
		{name: "created and deleted in the past", opts: &factory.PostOpts{CreatedAt: past, DeletedAt: &t1}, wantCreated: past, wantDeleted: &t1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := time.Now()
			p := factory.Post(t, db, tt.opts)
			if tt.wantAuthor != 0 && p.AuthorID != tt.wantAuthor || tt.wantAuthor == 0 && (p.AuthorID == alice.ID || p.AuthorID == 0) {
				t.Errorf("author = %d, want %d (0: a new user)", p.AuthorID, tt.wantAuthor)
			}
			if p.AppID != tt.wantApp || p.PaidPartnership != tt.wantPaid {
				t.Errorf("app %d paid %v, want %d %v", p.AppID, p.PaidPartnership, tt.wantApp, tt.wantPaid)
			}
			if tt.wantText == "" && !regexp.MustCompile(`^post [0-9a-f]{10}$`).MatchString(p.Text) ||
				tt.wantText != "" && p.Text != tt.wantText {
				t.Errorf("text = %q, want %q (or post <random>)", p.Text, tt.wantText)
			}
			if tt.wantCreated.IsZero() {
				checkRecent(t, "created_at", p.CreatedAt, before)
			} else if !p.CreatedAt.Equal(tt.wantCreated) {
				t.Errorf("created_at = %v, want %v", p.CreatedAt, tt.wantCreated)
			}
			checkStamp(t, "deleted_at", p.DeletedAt, tt.wantDeleted)
			if stored, err := db.PostByID(t.Context(), p.ID); err != nil || describePost(stored) != describePost(p) {
				t.Errorf("stored post = %+v, %v; want %+v", stored, err, p)
			}
			if _, err := db.UserByID(t.Context(), p.AuthorID); err != nil {
				t.Errorf("author %d: %v", p.AuthorID, err)
			}
		})
	}
}

// TestPostOptions covers the options beyond TestPost's: references,
// reposts, post fields, likes, counters and edits.
func TestPostOptions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, url := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	alice := factory.User(t, db, &factory.UserOpts{Username: "alice_opts"})
	bob := factory.User(t, db, nil)
	root := factory.Post(t, db, &factory.PostOpts{Author: alice, Text: "root"})
	if !slices.Equal(root.EditHistory, []int64{root.ID}) || root.Lang != "und" || root.ConversationID != root.ID {
		t.Errorf("default post = %+v", root)
	}

	entities := storage.Entities{Hashtags: []storage.TagEntity{{Start: 0, End: 5, Tag: "Tag"}}}
	reply := factory.Post(t, db, &factory.PostOpts{Author: bob, App: app, InReplyTo: root, QuoteOf: root, Lang: "en", Source: "src",
		PlaceID: "pl", PossiblySensitive: true, MediaIDs: []int64{5}, Entities: entities})
	if reply.InReplyToPostID != root.ID || reply.InReplyToUserID != alice.ID || reply.QuoteOfID != root.ID || reply.ConversationID != root.ID ||
		reply.Lang != "en" || reply.Source != "src" || reply.PlaceID != "pl" || !reply.PossiblySensitive || !slices.Equal(reply.MediaIDs, []int64{5}) ||
		!reflect.DeepEqual(reply.Entities, entities) || !slices.Equal(storagetest.StoredTerms(t, url, reply.ID).Hashtags, []string{"tag"}) {
		t.Errorf("reply = %s", describePost(reply))
	}
	terms := storage.PostTerms{Cashtags: []string{"avry"}}
	withTerms := factory.Post(t, db, &factory.PostOpts{Author: bob, Entities: entities, Terms: terms})
	if stored := storagetest.StoredTerms(t, url, withTerms.ID); !slices.Equal(stored.Cashtags, terms.Cashtags) || len(stored.Hashtags) != 0 {
		t.Errorf("terms = %+v, want %+v", stored, terms)
	}

	repost := factory.Post(t, db, &factory.PostOpts{Author: bob, App: app, RepostOf: root, Text: "ignored"})
	if repost.RepostOfID != root.ID || repost.Text != "RT @alice_opts: root" || repost.AuthorID != bob.ID || repost.AppID != app.ID {
		t.Errorf("repost = %s", describePost(repost))
	}

	liked := factory.Post(t, db, &factory.PostOpts{Author: alice, LikedBy: []storage.User{alice, bob}, Likes: 3})
	if liked.Metrics != (storage.PostMetrics{Likes: 5}) {
		t.Errorf("liked post metrics %+v, want 5 likes", liked.Metrics)
	}
	if m, err := db.UserMetrics(ctx, []int64{bob.ID}); err != nil || m[bob.ID].Likes != 1 {
		t.Errorf("bob's metrics %+v, %v; want 1 like", m[bob.ID], err)
	}
	counted := storage.PostMetrics{Likes: 100, Reposts: 20, Replies: 3, Quotes: 4}
	if p := factory.Post(t, db, &factory.PostOpts{Metrics: &counted}); p.Metrics != counted {
		t.Errorf("metrics %+v, want %+v", p.Metrics, counted)
	}
	if p := reload(t, db, root.ID); p.Metrics != (storage.PostMetrics{Replies: 1, Quotes: 1, Reposts: 1}) {
		t.Errorf("root metrics %+v", p.Metrics)
	}

	deletedReply := factory.Post(t, db, &factory.PostOpts{InReplyTo: root, DeletedAt: &t0})
	checkStamp(t, "deleted reply", deletedReply.DeletedAt, &t0)
	if p := reload(t, db, root.ID); p.Metrics.Replies != 1 {
		t.Errorf("root replies %d after a deleted reply, want 1", p.Metrics.Replies)
	}

	v2 := factory.Edit(t, db, reply, "edited")
	if v2.Text != "edited" || v2.EditRootID != reply.ID || !slices.Equal(v2.EditHistory, []int64{reply.ID, v2.ID}) ||
		v2.InReplyToPostID != root.ID || v2.Lang != "en" || v2.AppID != app.ID || !v2.Entities.Empty() {
		t.Errorf("edit = %s", describePost(v2))
	}
	if stored := reload(t, db, v2.ID); describePost(stored) != describePost(v2) {
		t.Errorf("stored edit = %s\nwant %s", describePost(stored), describePost(v2))
	}
}

func reload(t *testing.T, db *postgres.DB, id int64) storage.Post {
	t.Helper()
	p, err := db.PostByID(t.Context(), id)
	if err != nil {
		t.Fatalf("PostByID(%d): %v", id, err)
	}
	return p
}

func TestComplianceJob(t *testing.T) {
	t.Parallel()
	progress := storage.ComplianceProgress{LinesRead: 10, MalformedLines: 2, ResultLines: 3}
	created := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	type want struct {
		status                                  storage.JobStatus
		started, heartbeat, completed, enqueued *time.Time
		attempts                                int
		progress                                storage.ComplianceProgress
		reason                                  string
	}
	tests := []struct {
		name string
		opts factory.ComplianceJobOpts // App is filled in per test
		want want
	}{
		{"created by default", factory.ComplianceJobOpts{}, want{status: storage.JobCreated}},
		{"users, named, resumable", factory.ComplianceJobOpts{Type: storage.ComplianceTypeUsers, Name: "nightly", Resumable: true},
			want{status: storage.JobCreated}},
		{"enqueued", factory.ComplianceJobOpts{EnqueuedAt: &t0}, want{status: storage.JobCreated, enqueued: &t0}},
		{"explicitly created", factory.ComplianceJobOpts{Status: storage.JobCreated}, want{status: storage.JobCreated}},
		{"in progress", factory.ComplianceJobOpts{Status: storage.JobInProgress, StartedAt: t0},
			want{status: storage.JobInProgress, started: &t0, heartbeat: &t0, attempts: 1}},
		{"in progress, started at creation", factory.ComplianceJobOpts{Status: storage.JobInProgress, CreatedAt: created},
			want{status: storage.JobInProgress, started: &created, heartbeat: &created, attempts: 1}},
		{"in progress with progress", factory.ComplianceJobOpts{Status: storage.JobInProgress, StartedAt: t0, Progress: progress},
			want{status: storage.JobInProgress, started: &t0, heartbeat: &t0, attempts: 1, progress: progress}},
		{"in progress with a later heartbeat", factory.ComplianceJobOpts{Status: storage.JobInProgress, StartedAt: t0, HeartbeatAt: t1, Progress: progress},
			want{status: storage.JobInProgress, started: &t0, heartbeat: &t1, attempts: 1, progress: progress}},
		{"complete", factory.ComplianceJobOpts{Status: storage.JobComplete, StartedAt: t0, CompletedAt: t2, Progress: progress},
			want{status: storage.JobComplete, started: &t0, heartbeat: &t2, completed: &t2, attempts: 1, progress: progress}},
		{"complete at its start", factory.ComplianceJobOpts{Status: storage.JobComplete, StartedAt: t0},
			want{status: storage.JobComplete, started: &t0, heartbeat: &t0, completed: &t0, attempts: 1}},
		{"failed before it started", factory.ComplianceJobOpts{Status: storage.JobFailed, CreatedAt: created},
			want{status: storage.JobFailed, completed: &created, reason: "failed by factory"}},
		{"failed at a time, with a reason", factory.ComplianceJobOpts{Status: storage.JobFailed, CompletedAt: t1, FailureReason: "boom"},
			want{status: storage.JobFailed, completed: &t1, reason: "boom"}},
		{"failed after it started", factory.ComplianceJobOpts{Status: storage.JobFailed, StartedAt: t0, CompletedAt: t2, Progress: progress},
			want{status: storage.JobFailed, started: &t0, heartbeat: &t0, completed: &t2, attempts: 1, progress: progress, reason: "failed by factory"}},
	}
	db, _ := storagetest.NewDB(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			opts.App = factory.App(t, db, nil) // one app per case: in-progress jobs would block each other
			before := time.Now()
			j := factory.ComplianceJob(t, db, &opts)

			wantType := cmp.Or(opts.Type, storage.ComplianceTypeTweets)
			prefix := fmt.Sprintf("compliance/%d/%d/", opts.App.ID, j.ID)
			if j.AppID != opts.App.ID || j.Type != wantType || j.Resumable != opts.Resumable ||
				j.UploadKey != prefix+"upload.txt" || j.ResultKey != prefix+"result.json" ||
				j.UploadURL != "http://127.0.0.1/blobs/"+j.UploadKey || j.DownloadURL != "http://127.0.0.1/blobs/"+j.ResultKey {
				t.Errorf("ComplianceJob = %+v; want a %s job of app %d with keys under %s", j, wantType, opts.App.ID, prefix)
			}
			if want := cmp.Or(opts.Name, "job "); !strings.HasPrefix(j.Name, want) || opts.Name != "" && j.Name != want {
				t.Errorf("name = %q, want %q (or job <id>)", j.Name, want)
			}
			if opts.CreatedAt.IsZero() {
				checkRecent(t, "created_at", j.CreatedAt, before)
			} else if !j.CreatedAt.Equal(opts.CreatedAt) {
				t.Errorf("created_at = %v, want %v", j.CreatedAt, opts.CreatedAt)
			}
			if !j.UploadExpiresAt.Equal(j.CreatedAt.Add(15*time.Minute)) || !j.DownloadExpiresAt.Equal(j.CreatedAt.Add(7*24*time.Hour)) {
				t.Errorf("expiries %v, %v; want 15 minutes and 7 days after %v", j.UploadExpiresAt, j.DownloadExpiresAt, j.CreatedAt)
			}
			w := tt.want
			if j.Status != w.status || j.Attempts != w.attempts || progressOf(j) != w.progress || j.FailureReason != w.reason {
				t.Errorf("status %s attempts %d progress %+v reason %q; want %s %d %+v %q",
					j.Status, j.Attempts, progressOf(j), j.FailureReason, w.status, w.attempts, w.progress, w.reason)
			}
			checkStamp(t, "started_at", j.StartedAt, w.started)
			checkStamp(t, "heartbeat_at", j.HeartbeatAt, w.heartbeat)
			checkStamp(t, "completed_at", j.CompletedAt, w.completed)
			checkStamp(t, "enqueued_at", j.EnqueuedAt, w.enqueued)
		})
	}

	t.Run("expiries", func(t *testing.T) {
		t.Parallel()
		up, down := t0.Add(time.Hour), t0.Add(2*time.Hour)
		j := factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{CreatedAt: t0, UploadExpiresAt: up, DownloadExpiresAt: down})
		if !j.CreatedAt.Equal(t0) || !j.UploadExpiresAt.Equal(up) || !j.DownloadExpiresAt.Equal(down) {
			t.Errorf("times %v %v %v, want %v %v %v", j.CreatedAt, j.UploadExpiresAt, j.DownloadExpiresAt, t0, up, down)
		}
		if _, err := db.AppComplianceJob(t.Context(), j.AppID, j.ID); err != nil {
			t.Errorf("job of a new app: %v", err)
		}
	})
	t.Run("nil options", func(t *testing.T) {
		t.Parallel()
		a := factory.ComplianceJob(t, db, nil)
		b := factory.ComplianceJob(t, db, nil)
		if a.ID == b.ID || a.AppID == b.AppID || a.Status != storage.JobCreated || a.Type != storage.ComplianceTypeTweets {
			t.Errorf("two default jobs %+v and %+v: want distinct created tweets jobs of distinct new apps", a, b)
		}
	})
}

// TestErrors checks that a builder that cannot do what it is asked fails
// the test with a message that says why.
func TestErrors(t *testing.T) {
	t.Parallel()
	db, dbURL := storagetest.NewDB(t)
	app := factory.App(t, db, &factory.AppOpts{Name: "taken"})
	user := factory.User(t, db, &factory.UserOpts{Username: "taken"})
	factory.AccessToken(t, db, app, user, storage.AccessRead)
	busy := factory.App(t, db, nil)
	factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: busy, Status: storage.JobInProgress})
	unregistered, err := postgres.Open(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer unregistered.Close()

	tests := []struct {
		name  string
		build func(t testing.TB)
		want  string
	}{
		{"app name taken", func(t testing.TB) { factory.App(t, db, &factory.AppOpts{Name: "taken"}) }, "conflict"},
		{"username taken", func(t testing.TB) { factory.User(t, db, &factory.UserOpts{Username: "TAKEN"}) }, "conflict"},
		{"token of another level", func(t testing.TB) { factory.AccessToken(t, db, app, user, storage.AccessReadWrite) }, "already has a read token"},
		{"unknown author", func(t testing.TB) { factory.Post(t, db, &factory.PostOpts{Author: storage.User{ID: 1}}) }, "create post"},
		{"job while one is in progress", func(t testing.TB) {
			factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{App: busy})
		}, "conflict"},
		{"unknown status", func(t testing.TB) {
			factory.ComplianceJob(t, db, &factory.ComplianceJobOpts{Status: "paused"})
		}, `unknown status "paused"`},
		{"SQL on a store of unknown URL", func(t testing.TB) {
			factory.Post(t, unregistered, &factory.PostOpts{Author: user, CreatedAt: t0})
		}, "storagetest.NewDB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := fatalOf(t, tt.build)
			if msg == "" {
				t.Fatalf("builder succeeded, want it to fail the test with %q", tt.want)
			}
			if !strings.Contains(msg, tt.want) || !strings.HasPrefix(msg, "factory: ") {
				t.Errorf("builder failed with %q, want \"factory: ...%s...\"", msg, tt.want)
			}
		})
	}
}

// fatalOf runs build with a testing.TB whose Fatalf records the message and
// stops build, and returns the message ("" if build returned normally).
func fatalOf(t *testing.T, build func(testing.TB)) string {
	t.Helper()
	rec := &fatalRecorder{TB: t}
	var wg sync.WaitGroup
	wg.Go(func() { build(rec) })
	wg.Wait()
	return rec.msg
}

type fatalRecorder struct {
	testing.TB
	msg string
}

func (r *fatalRecorder) Helper() {}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func checkStamp(t *testing.T, what string, got, want *time.Time) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %v, want NULL", what, *got)
	case want != nil && got == nil:
		t.Errorf("%s = NULL, want %v", what, *want)
	case want != nil && !got.Equal(*want):
		t.Errorf("%s = %v, want %v", what, *got, *want)
	}
}

// checkRecent checks that got lies between from and now, with slack for
// clock differences between PostgreSQL and the test.
func checkRecent(t *testing.T, what string, got, from time.Time) {
	t.Helper()
	const slack = 5 * time.Second
	if got.Before(from.Add(-slack)) || got.After(time.Now().Add(slack)) {
		t.Errorf("%s = %v, want about now (%v)", what, got, from)
	}
}

func progressOf(j storage.ComplianceJob) storage.ComplianceProgress {
	return storage.ComplianceProgress{LinesRead: j.LinesRead, MalformedLines: j.MalformedLines, ResultLines: j.ResultLines}
}

// describeUser and describePost render records comparably (times as UTC
// instants, pointers dereferenced).
func describeUser(u storage.User) string {
	return fmt.Sprintf("id=%d username=%q name=%q created=%s protected=%s suspended=%s deactivated=%s deleted=%s profile=%+v",
		u.ID, u.Username, u.Name, ts(&u.CreatedAt), ts(u.ProtectedAt), ts(u.SuspendedAt), ts(u.DeactivatedAt), ts(u.DeletedAt), u.Profile)
}

func describePost(p storage.Post) string {
	return fmt.Sprintf("id=%d author=%d app=%d text=%q paid=%v created=%s deleted=%s superseded=%s refs=%d/%d/%d/%d/%d/%d "+
		"lang=%q source=%q place=%q sensitive=%v media=%v entities=%+v terms=%+v metrics=%+v history=%v",
		p.ID, p.AuthorID, p.AppID, p.Text, p.PaidPartnership, ts(&p.CreatedAt), ts(p.DeletedAt), ts(p.SupersededAt),
		p.ConversationID, p.InReplyToPostID, p.InReplyToUserID, p.QuoteOfID, p.RepostOfID, p.EditRootID,
		p.Lang, p.Source, p.PlaceID, p.PossiblySensitive, p.MediaIDs, p.Entities, p.Terms, p.Metrics, p.EditHistory)
}

func ts(t *time.Time) string {
	if t == nil {
		return "NULL"
	}
	return t.UTC().Format(time.RFC3339Nano)
}
