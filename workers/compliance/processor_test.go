package compliance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob"
	"github.com/aviary-dev/aviary/storage/blob/blobtest"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/tasks"
)

// env is a real PostgreSQL database, a local blob store and one app.
type env struct {
	db    *postgres.DB
	blobs *local.Store
	app   storage.App
	log   *slog.Logger
}

func newEnv(t *testing.T) *env {
	t.Helper()
	db, _ := storagetest.NewDB(t)
	blobs, err := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://127.0.0.1"})
	if err != nil {
		t.Fatalf("local blob store: %v", err)
	}
	app, err := db.CreateApp(t.Context(), "compliance-test", "")
	if err != nil {
		t.Fatalf("CreateApp: %v", err)
	}
	return &env{db: db, blobs: blobs, app: app, log: slog.New(slog.DiscardHandler)}
}

// job records a job the way the API does; edit may adjust the record.
func (e *env) job(t *testing.T, typ string, edit func(*storage.ComplianceJob)) storage.ComplianceJob {
	t.Helper()
	ctx := t.Context()
	id, err := e.db.NextID(ctx)
	if err != nil {
		t.Fatalf("NextID: %v", err)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	up, res := storage.ComplianceUploadKey(e.app.ID, id), storage.ComplianceResultKey(e.app.ID, id)
	rec := storage.ComplianceJob{
		ID: id, AppID: e.app.ID, Type: typ, Name: "test",
		UploadKey: up, ResultKey: res, UploadURL: "http://127.0.0.1/blobs/" + up, DownloadURL: "http://127.0.0.1/blobs/" + res,
		UploadExpiresAt: now.Add(storage.ComplianceUploadURLTTL), DownloadExpiresAt: now.Add(storage.ComplianceDownloadURLTTL), CreatedAt: now,
	}
	if edit != nil {
		edit(&rec)
	}
	j, err := e.db.CreateComplianceJob(ctx, rec)
	if err != nil {
		t.Fatalf("CreateComplianceJob: %v", err)
	}
	return j
}

func (e *env) put(t *testing.T, key, content string) {
	t.Helper()
	if err := e.blobs.Put(t.Context(), key, strings.NewReader(content), int64(len(content)), "text/plain"); err != nil {
		t.Fatalf("Put %s: %v", key, err)
	}
}

func (e *env) get(t *testing.T, key string) string {
	t.Helper()
	b, info := blobtest.Read(t, e.blobs, key)
	if info.ContentType != storage.ComplianceResultContentType {
		t.Errorf("%s content type = %q, want %s", key, info.ContentType, storage.ComplianceResultContentType)
	}
	return string(b)
}

func (e *env) wantNoObject(t *testing.T, key string) {
	t.Helper()
	if _, err := e.blobs.Stat(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat %s = %v, want blob.ErrNotFound", key, err)
	}
}

func (e *env) load(t *testing.T, id int64) storage.ComplianceJob {
	t.Helper()
	j, err := e.db.ComplianceJob(t.Context(), id)
	if err != nil {
		t.Fatalf("ComplianceJob %d: %v", id, err)
	}
	return j
}

// workerClock is the time the test workers believe it is.
var workerClock = time.Date(2025, 5, 6, 7, 8, 9, 0, time.UTC)

func (e *env) compliance(store Store) *Processor {
	if store == nil {
		store = e.db
	}
	return &Processor{Store: store, Blobs: e.blobs, Logger: e.log, Clock: func() time.Time { return workerClock },
		BatchSize: 3, Parallel: 2, HeartbeatEvery: time.Nanosecond}
}

func processTask(t *testing.T, c *Processor, jobID int64) error {
	t.Helper()
	task, err := tasks.NewComplianceProcess(jobID)
	if err != nil {
		t.Fatalf("NewComplianceProcess: %v", err)
	}
	return c.ProcessTask(t.Context(), task)
}

// wantLine renders one expected result line independently of appendResult.
func wantLine(id int64, created, redacted time.Time, reason string) string {
	const layout = "2006-01-02T15:04:05.000Z"
	return fmt.Sprintf(`{"id":"%d","action":"delete","created_at":"%s","redacted_at":"%s","reason":"%s"}`+"\n",
		id, created.UTC().Format(layout), redacted.UTC().Format(layout), reason)
}

// world is a platform with users in every state and their posts.
type world struct {
	users map[string]storage.User
	posts map[string]storage.Post
	// tweetsUpload and usersUpload are upload files over the world and
	// tweetsResult and usersResult their exact expected results.
	tweetsUpload, tweetsResult string
	tweetsProgress             storage.ComplianceProgress
	usersUpload, usersResult   string
	usersProgress              storage.ComplianceProgress
}

var (
	tProtected   = time.Date(2024, 1, 1, 1, 1, 1, 111_000_000, time.UTC)
	tSuspended   = time.Date(2024, 2, 2, 2, 2, 2, 222_999_999, time.UTC)
	tDeactivated = time.Date(2024, 3, 3, 3, 3, 3, 0, time.UTC)
	tDeleted     = time.Date(2024, 4, 4, 4, 4, 4, 444_000_000, time.UTC)
	tPostDeleted = time.Date(2024, 5, 5, 5, 5, 5, 555_000_000, time.UTC)
)

func newWorld(t *testing.T, e *env) *world {
	t.Helper()
	ctx := t.Context()
	w := &world{users: map[string]storage.User{}, posts: map[string]storage.Post{}}
	states := []struct {
		name   string
		states map[string]time.Time
	}{
		{"alice", nil},
		{"bob", map[string]time.Time{"protected": tProtected}},
		{"carol", map[string]time.Time{"suspended": tSuspended}},
		{"dave", map[string]time.Time{"deactivated": tDeactivated}},
		{"eve", map[string]time.Time{"deleted": tDeleted}},
		{"frank", map[string]time.Time{"protected": tProtected, "suspended": tSuspended}},
	}
	for _, s := range states {
		u, err := e.db.CreateUser(ctx, s.name, s.name)
		if err != nil {
			t.Fatalf("CreateUser: %v", err)
		}
		for state, at := range s.states {
			if u, err = e.db.SetUserState(ctx, u.ID, state, at); err != nil {
				t.Fatalf("SetUserState: %v", err)
			}
		}
		w.users[s.name] = u
	}
	for _, p := range []struct{ label, author string }{
		{"alice live", "alice"}, {"alice deleted", "alice"}, {"bob", "bob"}, {"bob deleted", "bob"},
		{"carol", "carol"}, {"dave", "dave"}, {"eve", "eve"}, {"frank", "frank"},
	} {
		post, err := e.db.CreatePost(ctx, storage.Post{AuthorID: w.users[p.author].ID, AppID: e.app.ID, Text: p.label})
		if err != nil {
			t.Fatalf("CreatePost: %v", err)
		}
		if strings.HasSuffix(p.label, "deleted") {
			if post, err = e.db.DeletePost(ctx, post.ID, tPostDeleted); err != nil {
				t.Fatalf("DeletePost: %v", err)
			}
		}
		w.posts[p.label] = post
	}

	p := func(label string) int64 { return w.posts[label].ID }
	u := func(name string) int64 { return w.users[name].ID }
	const unknown = 9223372036854775807
	w.tweetsUpload = fmt.Sprintf("%d\n%d\r\n  %d  \n\nnot-an-id\n%d\n%d\n%d\n%d\n%d\n%d\n%d\n%d",
		p("alice live"), p("alice deleted"), p("bob"), p("carol"), int64(unknown), p("dave"), p("eve"), p("frank"),
		p("bob deleted"), p("alice deleted"), p("alice live"))
	post := func(label string, at time.Time, reason string) string {
		return wantLine(p(label), w.posts[label].CreatedAt, at, reason)
	}
	w.tweetsResult = post("alice deleted", tPostDeleted, "deleted") +
		post("bob", tProtected, "protected") +
		post("carol", tSuspended, "suspended") +
		post("dave", tDeactivated, "deactivated") +
		post("eve", tDeleted, "deleted") +
		post("frank", tSuspended, "suspended") +
		post("bob deleted", tPostDeleted, "deleted") + // the post's own deletion wins over its author's state
		post("alice deleted", tPostDeleted, "deleted")
	w.tweetsProgress = storage.ComplianceProgress{LinesRead: 12, MalformedLines: 1, ResultLines: 8}

	w.usersUpload = fmt.Sprintf("%d\n%d\n%d\n%d\n-1\n%d\n%d\n%d\n%d\n",
		u("alice"), u("bob"), u("carol"), u("dave"), u("eve"), int64(unknown), u("frank"), p("bob"))
	user := func(name string, at time.Time, reason string) string {
		return wantLine(u(name), w.users[name].CreatedAt, at, reason)
	}
	w.usersResult = user("bob", tProtected, "protected") +
		user("carol", tSuspended, "suspended") +
		user("dave", tDeactivated, "deactivated") +
		user("eve", tDeleted, "deleted") +
		user("frank", tSuspended, "suspended")
	w.usersProgress = storage.ComplianceProgress{LinesRead: 9, MalformedLines: 1, ResultLines: 5}
	return w
}

func progressOf(j storage.ComplianceJob) storage.ComplianceProgress {
	return storage.ComplianceProgress{LinesRead: j.LinesRead, MalformedLines: j.MalformedLines, ResultLines: j.ResultLines}
}

func wantComplete(t *testing.T, j storage.ComplianceJob, attempts int, p storage.ComplianceProgress) {
	t.Helper()
	if j.Status != storage.JobComplete || j.Attempts != attempts || progressOf(j) != p || j.FailureReason != "" {
		t.Errorf("job = status %s attempts %d progress %+v reason %q; want complete, %d attempts, %+v",
			j.Status, j.Attempts, progressOf(j), j.FailureReason, attempts, p)
	}
	if j.CompletedAt == nil || !j.CompletedAt.Equal(workerClock) {
		t.Errorf("completed_at = %v, want %v", j.CompletedAt, workerClock)
	}
}

func TestComplianceProcessTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newWorld(t, e)
	tests := []struct {
		typ      string
		upload   string
		want     string
		progress storage.ComplianceProgress
	}{
		{storage.ComplianceTypeTweets, w.tweetsUpload, w.tweetsResult, w.tweetsProgress},
		{storage.ComplianceTypeUsers, w.usersUpload, w.usersResult, w.usersProgress},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d lines", tt.typ, tt.progress.LinesRead), func(t *testing.T) {
			j := e.job(t, tt.typ, nil)
			e.put(t, j.UploadKey, tt.upload)
			if err := processTask(t, e.compliance(nil), j.ID); err != nil {
				t.Fatalf("ProcessTask: %v", err)
			}
			if got := e.get(t, j.ResultKey); got != tt.want {
				t.Errorf("result:\n%s\nwant:\n%s", got, tt.want)
			}
			done := e.load(t, j.ID)
			wantComplete(t, done, 1, tt.progress)
			if done.StartedAt == nil || !done.StartedAt.Equal(workerClock) {
				t.Errorf("started_at = %v, want %v", done.StartedAt, workerClock)
			}
		})
	}
}

func TestComplianceProcessTaskFailsUnusableUploads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tests := []struct {
		name       string
		upload     *string // nil: nothing uploaded
		wantReason string  // prefix
		wantIn     string
	}{
		{"missing upload", nil, "The uploaded file could not be found.", ""},
		{"gzip upload", ptr(gzipped(t, strings.Repeat("1234567890\n", 1000))),
			"The uploaded file could not be read: ", "gzip-compressed"},
		{"binary upload", ptr("12\x00\x01\x02\n"), "The uploaded file could not be read: ", "not text"},
		// Before, these two completed with an empty result.
		{"empty upload", ptr(""), "The uploaded file could not be read: ", "contains no ids"},
		{"no valid id", ptr("junk\n\n99999999999999999999\n"), "The uploaded file could not be read: ", "none of its 2 lines is a valid id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := e.job(t, storage.ComplianceTypeTweets, nil)
			if tt.upload != nil {
				e.put(t, j.UploadKey, *tt.upload)
			}
			err := processTask(t, e.compliance(nil), j.ID)
			if !errors.Is(err, asynq.SkipRetry) {
				t.Errorf("ProcessTask error = %v, want it to wrap asynq.SkipRetry", err)
			}
			if tt.upload != nil && !errors.Is(err, tasks.ErrClientInput) {
				t.Errorf("ProcessTask error = %v, want it marked as the client's doing", err)
			}
			failed := e.load(t, j.ID)
			if failed.Status != storage.JobFailed || !strings.HasPrefix(failed.FailureReason, tt.wantReason) ||
				!strings.Contains(failed.FailureReason, tt.wantIn) {
				t.Errorf("job = status %s reason %q; want failed with %q...%q", failed.Status, failed.FailureReason, tt.wantReason, tt.wantIn)
			}
			if failed.CompletedAt == nil || !failed.CompletedAt.Equal(workerClock) {
				t.Errorf("completed_at = %v, want %v", failed.CompletedAt, workerClock)
			}
			e.wantNoObject(t, j.ResultKey)
			// A redelivered task leaves the failed job alone.
			if err := processTask(t, e.compliance(nil), j.ID); err != nil {
				t.Errorf("ProcessTask on the failed job: %v", err)
			}
			if again := e.load(t, j.ID); again.Status != storage.JobFailed || again.Attempts != 1 {
				t.Errorf("after redelivery: status %s attempts %d, want failed 1", again.Status, again.Attempts)
			}
			e.wantNoObject(t, j.ResultKey)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestComplianceProcessTaskBadTasks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.compliance(nil)
	unknown, err := tasks.NewComplianceProcess(123456789)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]*asynq.Task{
		"unknown job":      unknown,
		"malformed json":   asynq.NewTask(tasks.TypeComplianceProcess, []byte("{nope")),
		"missing job id":   asynq.NewTask(tasks.TypeComplianceProcess, []byte(`{}`)),
		"negative job id":  asynq.NewTask(tasks.TypeComplianceProcess, []byte(`{"job_id":-4}`)),
		"job id as string": asynq.NewTask(tasks.TypeComplianceProcess, []byte(`{"job_id":"5"}`)),
	}
	for name, task := range tests {
		t.Run(name, func(t *testing.T) {
			if err := c.ProcessTask(t.Context(), task); !errors.Is(err, asynq.SkipRetry) {
				t.Errorf("ProcessTask error = %v, want it to wrap asynq.SkipRetry", err)
			}
		})
	}
}

func TestComplianceProcessTaskFinishedJobIsNoop(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newWorld(t, e)
	j := e.job(t, storage.ComplianceTypeTweets, nil)
	e.put(t, j.UploadKey, w.tweetsUpload)
	if err := processTask(t, e.compliance(nil), j.ID); err != nil {
		t.Fatalf("ProcessTask: %v", err)
	}
	first := e.load(t, j.ID)
	// Change the upload: a redelivered task must not recompute anything.
	e.put(t, j.UploadKey, fmt.Sprintf("%d\n", w.posts["alice deleted"].ID))
	if err := processTask(t, e.compliance(nil), j.ID); err != nil {
		t.Fatalf("ProcessTask on a complete job: %v", err)
	}
	if got := e.get(t, j.ResultKey); got != w.tweetsResult {
		t.Errorf("result changed by a redelivered task:\n%s", got)
	}
	again := e.load(t, j.ID)
	wantComplete(t, again, 1, w.tweetsProgress)
	if !again.UpdatedAt.Equal(first.UpdatedAt) {
		t.Errorf("updated_at moved from %v to %v", first.UpdatedAt, again.UpdatedAt)
	}
}

// TestComplianceProcessTaskRetry runs a job whose previous attempt died
// mid-way (the job is still in_progress): the retry redoes the whole file
// and writes exactly what a single clean attempt writes.
func TestComplianceProcessTaskRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newWorld(t, e)
	clean := e.job(t, storage.ComplianceTypeTweets, nil)
	retried := e.job(t, storage.ComplianceTypeTweets, nil)
	e.put(t, clean.UploadKey, w.tweetsUpload)
	e.put(t, retried.UploadKey, w.tweetsUpload)
	if err := processTask(t, e.compliance(nil), clean.ID); err != nil {
		t.Fatalf("ProcessTask (clean): %v", err)
	}

	died := workerClock.Add(-time.Hour)
	if _, started, err := e.db.StartComplianceJob(t.Context(), retried.ID, died); err != nil || !started {
		t.Fatalf("StartComplianceJob = %v, %v", started, err)
	}
	if err := e.db.HeartbeatComplianceJob(t.Context(), retried.ID, storage.ComplianceProgress{LinesRead: 5, ResultLines: 2}, died); err != nil {
		t.Fatal(err)
	}
	if err := processTask(t, e.compliance(nil), retried.ID); err != nil {
		t.Fatalf("ProcessTask (retry): %v", err)
	}
	cleanResult, retryResult := e.get(t, clean.ResultKey), e.get(t, retried.ResultKey)
	if retryResult != cleanResult || retryResult != w.tweetsResult {
		t.Errorf("retry result:\n%s\nclean result:\n%s\nwant:\n%s", retryResult, cleanResult, w.tweetsResult)
	}
	done := e.load(t, retried.ID)
	wantComplete(t, done, 2, w.tweetsProgress)
	if done.StartedAt == nil || !done.StartedAt.Equal(died) {
		t.Errorf("started_at = %v, want the first attempt's %v", done.StartedAt, died)
	}
}

// flakyStore is the real store with one injected lookup failure, standing
// in for a database hiccup during an attempt.
type flakyStore struct {
	*postgres.DB
	calls atomic.Int32
}

var errHiccup = errors.New("injected database hiccup")

func (s *flakyStore) PostsNeedingAction(ctx context.Context, ids []int64) ([]storage.PostStatus, error) {
	if s.calls.Add(1) == 2 {
		return nil, errHiccup
	}
	return s.DB.PostsNeedingAction(ctx, ids)
}

func TestComplianceProcessTaskTransientFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newWorld(t, e)
	j := e.job(t, storage.ComplianceTypeTweets, nil)
	e.put(t, j.UploadKey, w.tweetsUpload)
	c := e.compliance(&flakyStore{DB: e.db})

	err := processTask(t, c, j.ID)
	if !errors.Is(err, errHiccup) || errors.Is(err, asynq.SkipRetry) {
		t.Fatalf("first attempt error = %v, want the retryable lookup error", err)
	}
	open := e.load(t, j.ID)
	if open.Status != storage.JobInProgress || open.Attempts != 1 {
		t.Errorf("after a failed attempt: status %s attempts %d, want in_progress 1", open.Status, open.Attempts)
	}
	e.wantNoObject(t, j.ResultKey) // nothing partial is stored

	if err := processTask(t, c, j.ID); err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	if got := e.get(t, j.ResultKey); got != w.tweetsResult {
		t.Errorf("result after retry:\n%s\nwant:\n%s", got, w.tweetsResult)
	}
	wantComplete(t, e.load(t, j.ID), 2, w.tweetsProgress)
}

func TestComplianceFinalFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.compliance(nil)
	ctx := context.Background()

	t.Run("other task type", func(t *testing.T) {
		j := e.job(t, storage.ComplianceTypeTweets, nil)
		c.FinalFailure(ctx, asynq.NewTask("media:process", []byte(fmt.Sprintf(`{"job_id":%d}`, j.ID))), 1, asynq.SkipRetry)
		if got := e.load(t, j.ID); got.Status != storage.JobCreated {
			t.Errorf("job status = %s, want created", got.Status)
		}
	})
	t.Run("final failure", func(t *testing.T) {
		j := e.job(t, storage.ComplianceTypeUsers, nil)
		task, _ := tasks.NewComplianceProcess(j.ID)
		c.FinalFailure(ctx, task, 1, fmt.Errorf("boom: %w", asynq.SkipRetry))
		got := e.load(t, j.ID)
		if want := fmt.Sprintf("Processing failed after 1 attempts. The operator can find the cause in the worker logs (job %d).", j.ID); got.Status != storage.JobFailed || got.FailureReason != want {
			t.Errorf("job = status %s reason %q; want failed %q", got.Status, got.FailureReason, want)
		}
	})
	t.Run("finished job stays finished", func(t *testing.T) {
		j := e.job(t, storage.ComplianceTypeTweets, nil)
		e.put(t, j.UploadKey, "1\n")
		if err := processTask(t, c, j.ID); err != nil {
			t.Fatal(err)
		}
		task, _ := tasks.NewComplianceProcess(j.ID)
		c.FinalFailure(ctx, task, 1, errors.New("late"))
		if got := e.load(t, j.ID); got.Status != storage.JobComplete || got.FailureReason != "" {
			t.Errorf("job = status %s reason %q; want complete", got.Status, got.FailureReason)
		}
	})
}

// TestComplianceProcessTaskKeepsStoredResult covers an attempt that stored
// the result but could not mark the job complete: the retry completes the
// job with the stored result and the counts recorded before it was stored,
// and never recomputes or replaces it.
func TestComplianceProcessTaskKeepsStoredResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	w := newWorld(t, e)
	j := e.job(t, storage.ComplianceTypeTweets, nil)
	e.put(t, j.UploadKey, w.tweetsUpload)
	if _, started, err := e.db.StartComplianceJob(t.Context(), j.ID, workerClock); err != nil || !started {
		t.Fatalf("StartComplianceJob = %v, %v", started, err)
	}
	recorded := storage.ComplianceProgress{LinesRead: 7, MalformedLines: 1, ResultLines: 1}
	if err := e.db.HeartbeatComplianceJob(t.Context(), j.ID, recorded, workerClock); err != nil {
		t.Fatal(err)
	}
	const stored = `{"id":"1","action":"delete","created_at":"2020-01-01T00:00:00.000Z","redacted_at":"2020-01-02T00:00:00.000Z","reason":"deleted"}` + "\n"
	if err := e.blobs.Put(t.Context(), j.ResultKey, strings.NewReader(stored), int64(len(stored)), storage.ComplianceResultContentType); err != nil {
		t.Fatal(err)
	}
	if err := processTask(t, e.compliance(nil), j.ID); err != nil {
		t.Fatalf("ProcessTask: %v", err)
	}
	wantComplete(t, e.load(t, j.ID), 2, recorded)
	if got := e.get(t, j.ResultKey); got != stored {
		t.Errorf("stored result replaced:\n%s", got)
	}
}

func TestComplianceFailureRemovesStoredResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	j := e.job(t, storage.ComplianceTypeUsers, nil)
	e.put(t, j.ResultKey, "partial?\n")
	task, _ := tasks.NewComplianceProcess(j.ID)
	e.compliance(nil).FinalFailure(context.Background(), task, 1, fmt.Errorf("boom: %w", asynq.SkipRetry))
	if got := e.load(t, j.ID); got.Status != storage.JobFailed {
		t.Fatalf("job status %s, want failed", got.Status)
	}
	e.wantNoObject(t, j.ResultKey)
}
