package console_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/domain/searchquery"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// openBlob is cmd/aviary's adapter of the blob store, over the real local
// driver.
func (f *fixture) openBlob(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	body, info, err := f.blobs.Get(ctx, key)
	if errors.Is(err, blob.ErrNotFound) {
		return nil, 0, storage.ErrNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	return body, info.Size, nil
}

// TestConsoleCorePagesNeedLogin: the new pages send a browser without a
// session to the login page, and the previews show nothing.
func TestConsoleCorePagesNeedLogin(t *testing.T) {
	t.Parallel()
	f := setup(t)
	anon := &browser{t: t, f: f, c: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	for _, path := range []string{"/console/posts?q=hello", "/console/media", "/console/media/1/preview", "/console/streams", "/console/activity"} {
		if p := anon.get(path); p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/console/login?next=") {
			t.Errorf("GET %s without a session: %d %q", path, p.status, p.location)
		}
	}
	if p := anon.htmx("/console/media/uploads"); p.status != http.StatusUnauthorized {
		t.Errorf("media poll without a session: %d", p.status)
	}
	alice := f.login(t, f.alice)
	for _, tc := range []struct{ path, nav string }{
		{"/console/posts", "/console/posts"}, {"/console/media", "/console/media"},
		{"/console/streams", "/console/streams"}, {"/console/activity", "/console/activity"},
	} {
		p := alice.get(tc.path)
		if p.status != http.StatusOK || !strings.Contains(p.body, `<a href="`+tc.nav+`" aria-current="page">`) {
			t.Errorf("GET %s: %d, current nav entry missing:\n%s", tc.path, p.status, p.body)
		}
	}
}

var postRow = regexp.MustCompile(`<tr id="post-(\d+)">`)

func postIDs(p page) []string {
	var out []string
	for _, m := range postRow.FindAllStringSubmatch(p.body, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestConsolePosts: the search runs the platform's query language over
// the posts, pages through them, keeps to the archive asked for, hides a
// protected author's posts from others, and shows a refused query with
// the API's detail.
func TestConsolePosts(t *testing.T) {
	t.Parallel()
	f := setup(t)
	db := f.db
	hello := factory.Post(t, db, &factory.PostOpts{Author: f.alice, App: f.aliceApp, Text: "hello #aviary world",
		Metrics: &storage.PostMetrics{Likes: 7, Reposts: 3, Replies: 2, Quotes: 1}})
	other := factory.Post(t, db, &factory.PostOpts{Author: f.bob, Text: "nothing to see"})
	old := factory.Post(t, db, &factory.PostOpts{Author: f.bob, Text: "hello from the archive", CreatedAt: time.Now().Add(-10 * 24 * time.Hour)})
	now := time.Now()
	hidden := factory.User(t, db, &factory.UserOpts{ProtectedAt: &now})
	secret := factory.Post(t, db, &factory.PostOpts{Author: hidden, Text: "hello from a protected account"})
	alice := f.login(t, f.alice)

	search := func(q url.Values) page { return alice.get("/console/posts?" + q.Encode()) }
	for _, tc := range []struct {
		name      string
		q         url.Values
		want, not []storage.Post
	}{
		{"recent", url.Values{"q": {"hello"}}, []storage.Post{hello}, []storage.Post{other, old, secret}},
		{"all", url.Values{"q": {"hello"}, "archive": {"all"}}, []storage.Post{hello, old}, []storage.Post{other, secret}},
		{"or and negation", url.Values{"q": {"(world OR nothing) -nothing"}}, []storage.Post{hello}, []storage.Post{other}},
		{"author", url.Values{"q": {"from:bob"}, "archive": {"all"}}, []storage.Post{other, old}, []storage.Post{hello}},
	} {
		p := search(tc.q)
		if p.status != http.StatusOK {
			t.Errorf("%s: %d\n%s", tc.name, p.status, p.body)
			continue
		}
		got := strings.Join(postIDs(p), ",")
		for _, want := range tc.want {
			if !strings.Contains(got, ids.Format(want.ID)) {
				t.Errorf("%s: post %q not found (got %s)", tc.name, want.Text, got)
			}
		}
		for _, not := range tc.not {
			if strings.Contains(got, ids.Format(not.ID)) {
				t.Errorf("%s: post %q found", tc.name, not.Text)
			}
		}
	}
	p := search(url.Values{"q": {"world"}})
	for _, want := range []string{"@alice", "hello #aviary world", "<td>7</td><td>3</td><td>2</td><td>1</td>"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("result row lacks %q:\n%s", want, p.body)
		}
	}

	// A refused query shows the same detail as the API's 400.
	for _, q := range []string{"(hello", "hello sample:10", strings.Repeat("a", searchquery.MaxRecentLength+1)} {
		_, err := searchquery.ParseSearch(q, "recent", searchquery.MaxRecentLength)
		var refused *searchquery.Refusal
		if !errors.As(err, &refused) {
			t.Fatalf("query %q: %v, want a refusal", q, err)
		}
		p := search(url.Values{"q": {q}})
		if p.status != http.StatusBadRequest || !strings.Contains(p.body, `<p role="alert" id="query-error">`+html.EscapeString(refused.Detail)+`</p>`) ||
			!strings.Contains(p.body, `aria-invalid="true"`) {
			t.Errorf("query %q: %d, want the detail %q:\n%s", q, p.status, refused.Detail, p.body)
		}
	}
	if p := search(url.Values{"q": {"hello"}, "after": {"junk"}}); p.status != http.StatusBadRequest {
		t.Errorf("a made-up page link: %d", p.status)
	}
}

// TestConsolePostsPages: pages of 20 follow one another without a gap or
// a repeat, newest first, the last one without a next link.
func TestConsolePostsPages(t *testing.T) {
	t.Parallel()
	f := setup(t)
	want := map[string]bool{}
	for i := range 25 {
		p := factory.Post(t, f.db, &factory.PostOpts{Author: f.alice, Text: fmt.Sprintf("paged post %d", i)})
		want[ids.Format(p.ID)] = true
	}
	alice := f.login(t, f.alice)
	first := alice.get("/console/posts?q=paged")
	next := regexp.MustCompile(`<a href="([^"]+)" id="next-page"`).FindStringSubmatch(first.body)
	if len(postIDs(first)) != 20 || next == nil {
		t.Fatalf("first page: %d posts, next link %v", len(postIDs(first)), next)
	}
	second := alice.get(html.UnescapeString(next[1]))
	if len(postIDs(second)) != 5 || strings.Contains(second.body, `id="next-page"`) {
		t.Fatalf("second page: %d posts\n%s", len(postIDs(second)), second.body)
	}
	all := append(postIDs(first), postIDs(second)...)
	for i, id := range all {
		if !want[id] {
			t.Errorf("post %s listed twice or not one of the 25", id)
		}
		delete(want, id)
		if n, _ := strconv.ParseInt(id, 10, 64); i > 0 {
			if prev, _ := strconv.ParseInt(all[i-1], 10, 64); prev <= n {
				t.Errorf("not newest first: %d before %d", prev, n)
			}
		}
	}
}

// upload records media of category for app by owner and moves it to
// state: pending and in_progress through the upload's own calls;
// succeeded writes out (the processed copy, of outType) and poster to the
// blob store; failed records a processing error.
func (f *fixture) upload(t *testing.T, app storage.App, owner storage.User, category string, state storage.MediaState, out []byte, outType string, poster []byte) storage.Media {
	t.Helper()
	ctx := t.Context()
	id, err := f.db.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kind := storage.MediaKindOf(category)
	now := time.Now()
	m, err := f.db.CreateMedia(ctx, storage.Media{ID: id, Key: storage.MediaKey(kind, id), OwnerID: owner.ID, AppID: app.ID,
		MediaType: storage.MediaTypesOf(category)[0], Category: category, Kind: kind, TotalBytes: 100,
		CreatedAt: now, ExpiresAt: now.Add(storage.MediaUploadTTL)})
	if err != nil {
		t.Fatal(err)
	}
	if state == storage.MediaUploading {
		return m
	}
	if _, err := f.db.AddMediaSegment(ctx, storage.MediaSegment{MediaID: id, Key: storage.MediaSegmentKey(id, "a"), Size: 100}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.FinalizeMedia(ctx, id, now); err != nil {
		t.Fatal(err)
	}
	if state != storage.MediaPending {
		if _, err := f.db.StartMediaProcessing(ctx, id, now); err != nil {
			t.Fatal(err)
		}
	}
	switch state {
	case storage.MediaInProgress:
		err = f.db.SetMediaProgress(ctx, id, 42)
	case storage.MediaFailed:
		err = f.db.FailMedia(ctx, id, storage.MediaErrorInvalidMedia, "InvalidMedia", "Unsupported media file", now)
	case storage.MediaSucceeded:
		res := storage.MediaResult{Width: 4, Height: 3, OutputType: outType, OutputKey: storage.MediaOutputKey(id, strings.TrimPrefix(outType, "video/"))}
		if err := f.blobs.Put(ctx, res.OutputKey, bytes.NewReader(out), int64(len(out)), outType); err != nil {
			t.Fatal(err)
		}
		if poster != nil {
			res.PreviewKey = storage.MediaPreviewKey(id)
			if err := f.blobs.Put(ctx, res.PreviewKey, bytes.NewReader(poster), int64(len(poster)), "image/jpeg"); err != nil {
				t.Fatal(err)
			}
		}
		err = f.db.CompleteMedia(ctx, id, res, now)
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err = f.db.Media(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mediaPath(m storage.Media) string { return "/console/media/" + ids.Format(m.ID) }

// TestConsoleMedia: the viewer's apps' uploads with their state, progress
// and error; previews streamed from the blob store with the record's
// content type; the table polls while one is processing; another user's
// media is not found; the administrator sees all.
func TestConsoleMedia(t *testing.T) {
	t.Parallel()
	f := setup(t)
	png, mp4, jpeg := []byte("\x89PNG\r\n\x1a\nfake image"), []byte("\x00\x00\x00\x18ftypmp42 fake video"), []byte("\xff\xd8\xff fake poster")
	photo := f.upload(t, f.aliceApp, f.alice, storage.MediaTweetImage, storage.MediaSucceeded, png, "image/png", nil)
	video := f.upload(t, f.aliceApp, f.alice, storage.MediaTweetVideo, storage.MediaSucceeded, mp4, "video/mp4", jpeg)
	working := f.upload(t, f.aliceApp, f.alice, storage.MediaTweetVideo, storage.MediaInProgress, nil, "", nil)
	failed := f.upload(t, f.aliceApp, f.alice, storage.MediaTweetImage, storage.MediaFailed, nil, "", nil)
	bobs := f.upload(t, f.bobApp, f.bob, storage.MediaTweetImage, storage.MediaSucceeded, png, "image/png", nil)
	alice, admin := f.login(t, f.alice), f.login(t, f.admin)

	p := alice.get("/console/media")
	for _, want := range []string{
		`<tr id="media-` + ids.Format(photo.ID) + `">`,
		`<img class="preview" src="` + mediaPath(photo) + `/preview" alt="Preview of media ` + ids.Format(photo.ID) + `">`,
		`<video class="preview" controls preload="metadata" src="` + mediaPath(video) + `/video" poster="` + mediaPath(video) + `/preview"`,
		`id="media-` + ids.Format(working.ID) + `-state">in_progress</span>`, `value="42"`,
		`id="media-` + ids.Format(failed.ID) + `-state">failed</span>`, "InvalidMedia: Unsupported media file",
		`hx-get="/console/media/uploads" hx-trigger="every 2s"`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("media page lacks %q:\n%s", want, p.body)
		}
	}
	if strings.Contains(p.body, ids.Format(bobs.ID)) {
		t.Error("alice's media page lists bob's upload")
	}
	if frag := alice.htmx("/console/media/uploads"); !strings.HasPrefix(frag.body, `<div id="uploads"`) || strings.Contains(frag.body, "<html") {
		t.Errorf("fragment:\n%s", frag.body)
	}

	for _, tc := range []struct {
		name   string
		b      *browser
		path   string
		status int
		ctype  string
		body   []byte
	}{
		{"photo", alice, mediaPath(photo) + "/preview", http.StatusOK, "image/png", png},
		{"poster", alice, mediaPath(video) + "/preview", http.StatusOK, "image/jpeg", jpeg},
		{"video", alice, mediaPath(video) + "/video", http.StatusOK, "video/mp4", mp4},
		{"a photo has no video", alice, mediaPath(photo) + "/video", http.StatusNotFound, "", nil},
		{"still processing", alice, mediaPath(working) + "/preview", http.StatusNotFound, "", nil},
		{"failed", alice, mediaPath(failed) + "/preview", http.StatusNotFound, "", nil},
		{"bob's", alice, mediaPath(bobs) + "/preview", http.StatusNotFound, "", nil},
		{"unknown", alice, "/console/media/999999999/preview", http.StatusNotFound, "", nil},
		{"junk id", alice, "/console/media/x1/preview", http.StatusNotFound, "", nil},
		{"administrator, bob's", admin, mediaPath(bobs) + "/preview", http.StatusOK, "image/png", png},
	} {
		got := tc.b.get(tc.path)
		if got.status != tc.status {
			t.Errorf("%s: GET %s: %d, want %d", tc.name, tc.path, got.status, tc.status)
			continue
		}
		if tc.body != nil && (got.header.Get("Content-Type") != tc.ctype || got.body != string(tc.body) ||
			got.header.Get("X-Content-Type-Options") != "nosniff" || got.header.Get("Content-Length") != strconv.Itoa(len(tc.body))) {
			t.Errorf("%s: %q %q (%s bytes), want %q %q", tc.name, got.header.Get("Content-Type"), got.body, got.header.Get("Content-Length"), tc.ctype, tc.body)
		}
	}
	if p := admin.get("/console/media"); !strings.Contains(p.body, ids.Format(bobs.ID)) || !strings.Contains(p.body, ids.Format(photo.ID)) {
		t.Error("the administrator's media page does not list every upload")
	}

	// Once nothing is processing, the table stops polling.
	if err := f.db.FailMedia(t.Context(), working.ID, storage.MediaErrorInternal, "InternalError", "gave up", time.Now()); err != nil {
		t.Fatal(err)
	}
	if frag := alice.htmx("/console/media/uploads"); strings.Contains(frag.body, "hx-get") || !strings.Contains(frag.body, "InternalError") {
		t.Errorf("fragment after the last upload settled:\n%s", frag.body)
	}
}

// TestConsoleStreams: the open connections of the viewer's apps, whatever
// replica holds them; Kill marks the record for termination (what the
// holder's heartbeat then carries out) and announces it to the replicas;
// another user's connection is neither listed nor killed.
func TestConsoleStreams(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	open := func(app storage.App, replica string) storage.StreamConnection {
		c, err := f.db.OpenStreamConnection(ctx, storage.StreamConnection{AppID: app.ID, Endpoint: storage.EndpointFilteredStream,
			ClientIP: "192.0.2.7", Replica: replica}, 5)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	mine, theirs := open(f.aliceApp, "api-2"), open(f.bobApp, "api-1")
	closed := open(f.aliceApp, "api-1")
	if err := f.db.CloseStreamConnection(ctx, closed.ID, storage.DisconnectClient); err != nil {
		t.Fatal(err)
	}
	alice, admin := f.login(t, f.alice), f.login(t, f.admin)
	p := alice.get("/console/streams")
	for _, want := range []string{`<tr id="conn-` + mine.ID + `">`, "api-2", "192.0.2.7", "filtered_stream", `aria-label="Kill connection ` + mine.ID + `"`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("streams page lacks %q:\n%s", want, p.body)
		}
	}
	if strings.Contains(p.body, theirs.ID) || strings.Contains(p.body, closed.ID) {
		t.Error("alice's streams page lists bob's or a closed connection")
	}
	if p := admin.get("/console/streams"); !strings.Contains(p.body, mine.ID) || !strings.Contains(p.body, theirs.ID) {
		t.Error("the administrator does not see every open connection")
	}

	kill := func(b *browser, app storage.App, conn string) page {
		return b.post(appPath(app)+"/streams/"+conn+"/kill", nil)
	}
	for _, tc := range []struct {
		name string
		app  storage.App
		conn string
	}{
		{"bob's app", f.bobApp, theirs.ID},
		{"bob's connection under alice's app", f.aliceApp, theirs.ID},
		{"a closed connection", f.aliceApp, closed.ID},
		{"not a uuid", f.aliceApp, "nope"},
	} {
		if p := kill(alice, tc.app, tc.conn); p.status != http.StatusNotFound {
			t.Errorf("alice kills %s: %d", tc.name, p.status)
		}
	}
	select {
	case c := <-f.ended:
		t.Fatalf("a refused kill was announced: %v", c)
	default:
	}
	if end, err := f.db.HeartbeatStreamConnections(ctx, []string{theirs.ID}); err != nil || len(end) != 0 {
		t.Errorf("bob's connection would end: %v (%v)", end, err)
	}

	p = kill(alice, f.aliceApp, strings.ToUpper(mine.ID))
	if p.status != http.StatusSeeOther || p.location != "/console/streams?killed="+mine.ID {
		t.Fatalf("kill: %d %q\n%s", p.status, p.location, p.body)
	}
	if got := <-f.ended; strings.Join(got, " ") != ids.Format(f.aliceApp.ID)+" "+mine.ID {
		t.Errorf("announced %v", got)
	}
	// The replica holding it (api-2) ends it at its next heartbeat, should
	// the announcement be lost.
	if end, err := f.db.HeartbeatStreamConnections(ctx, []string{mine.ID}); err != nil || end[mine.ID] != storage.DisconnectTerminated {
		t.Errorf("the holder's heartbeat: %v (%v)", end, err)
	}
	if p := alice.get(p.location); !strings.Contains(p.body, `<p role="status" id="flash">Connection `+mine.ID+` is ending`) {
		t.Errorf("after the kill:\n%s", p.body)
	}
	// The administrator may end anyone's.
	if p := kill(admin, f.bobApp, theirs.ID); p.status != http.StatusSeeOther {
		t.Errorf("the administrator kills bob's: %d", p.status)
	}
	if got := <-f.ended; got[1] != theirs.ID {
		t.Errorf("announced %v", got)
	}
}

// TestConsoleActivity: the viewer's apps' activity subscriptions with
// their filter and delivery; delete, and another user's not found.
func TestConsoleActivity(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	hook, err := f.db.CreateWebhook(ctx, storage.WebhookCreate{AppID: f.aliceApp.ID, URL: "https://receiver.example/hook", CheckedAt: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	byUser, err := f.db.CreateActivitySubscription(ctx, storage.ActivitySubscription{AppID: f.aliceApp.ID, EventType: "profile.update.bio",
		FilterUserID: f.bob.ID, Tag: "watch bob", WebhookID: hook.ID}, 0)
	if err != nil {
		t.Fatal(err)
	}
	byKeyword, err := f.db.CreateActivitySubscription(ctx, storage.ActivitySubscription{AppID: f.aliceApp.ID, EventType: "news.new",
		FilterKeyword: "aviary"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	bobs, err := f.db.CreateActivitySubscription(ctx, storage.ActivitySubscription{AppID: f.bobApp.ID, EventType: "profile.update.bio",
		FilterUserID: f.alice.ID, Tag: "bob's secret"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	alice, admin := f.login(t, f.alice), f.login(t, f.admin)
	p := alice.get("/console/activity")
	for _, want := range []string{
		`<tr id="sub-` + ids.Format(byUser.ID) + `">`, "profile.update.bio", "user <code>" + ids.Format(f.bob.ID) + "</code>", "watch bob",
		`<a href="` + appPath(f.aliceApp) + "/webhooks/" + ids.Format(hook.ID) + `">webhook ` + ids.Format(hook.ID) + "</a>",
		`<tr id="sub-` + ids.Format(byKeyword.ID) + `">`, "keyword “aviary”", "activity stream",
		`aria-label="Delete subscription ` + ids.Format(byKeyword.ID) + `"`,
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("activity page lacks %q:\n%s", want, p.body)
		}
	}
	if strings.Contains(p.body, "bob&#39;s secret") || strings.Contains(p.body, `id="sub-`+ids.Format(bobs.ID)+`"`) {
		t.Error("alice sees bob's subscription")
	}
	if p := admin.get("/console/activity"); !strings.Contains(p.body, `id="sub-`+ids.Format(bobs.ID)+`"`) {
		t.Error("the administrator does not see bob's subscription")
	}
	del := func(b *browser, app storage.App, id int64) page {
		return b.post(appPath(app)+"/activity/"+ids.Format(id)+"/delete", nil)
	}
	if p := del(alice, f.bobApp, bobs.ID); p.status != http.StatusNotFound {
		t.Errorf("alice deletes bob's under bob's app: %d", p.status)
	}
	if p := del(alice, f.aliceApp, bobs.ID); p.status != http.StatusNotFound {
		t.Errorf("alice deletes bob's under her app: %d", p.status)
	}
	if _, err := f.db.ActivitySubscriptionOf(ctx, f.bobApp.ID, bobs.ID); err != nil {
		t.Errorf("bob's subscription: %v", err)
	}
	p = del(alice, f.aliceApp, byKeyword.ID)
	if p.status != http.StatusSeeOther || p.location != "/console/activity?deleted="+ids.Format(byKeyword.ID) {
		t.Fatalf("delete: %d %q", p.status, p.location)
	}
	if _, err := f.db.ActivitySubscriptionOf(ctx, f.aliceApp.ID, byKeyword.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if p := alice.get(p.location); strings.Contains(p.body, `id="sub-`+ids.Format(byKeyword.ID)+`"`) || !strings.Contains(p.body, "deleted.") {
		t.Errorf("after delete:\n%s", p.body)
	}
	if p := del(alice, f.aliceApp, byKeyword.ID); p.status != http.StatusNotFound {
		t.Errorf("delete again: %d", p.status)
	}
	if p := del(admin, f.bobApp, bobs.ID); p.status != http.StatusSeeOther {
		t.Errorf("the administrator deletes bob's: %d", p.status)
	}
}

// TestConsoleCoreCSRF: the new POSTs are refused without the session's
// token, or with another session's, and change nothing.
func TestConsoleCoreCSRF(t *testing.T) {
	t.Parallel()
	f := setup(t)
	ctx := t.Context()
	conn, err := f.db.OpenStreamConnection(ctx, storage.StreamConnection{AppID: f.aliceApp.ID, Endpoint: storage.EndpointFilteredStream}, 5)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := f.db.CreateActivitySubscription(ctx, storage.ActivitySubscription{AppID: f.aliceApp.ID, EventType: "news.new", FilterKeyword: "x"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	alice, bob := f.login(t, f.alice), f.login(t, f.bob)
	for _, path := range []string{
		appPath(f.aliceApp) + "/streams/" + conn.ID + "/kill",
		appPath(f.aliceApp) + "/activity/" + ids.Format(sub.ID) + "/delete",
	} {
		for _, token := range []string{"", bob.csrf} {
			if p := alice.post(path, url.Values{"csrf_token": {token}}); p.status != http.StatusForbidden {
				t.Errorf("POST %s with CSRF token %q: %d, want 403", path, token, p.status)
			}
		}
	}
	if end, err := f.db.HeartbeatStreamConnections(ctx, []string{conn.ID}); err != nil || len(end) != 0 {
		t.Errorf("the connection would end: %v (%v)", end, err)
	}
	if _, err := f.db.ActivitySubscriptionOf(ctx, f.aliceApp.ID, sub.ID); err != nil {
		t.Errorf("the subscription: %v", err)
	}
	select {
	case c := <-f.ended:
		t.Errorf("announced %v", c)
	default:
	}
}
