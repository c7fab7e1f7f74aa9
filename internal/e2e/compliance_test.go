package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/validation"
)

// world is the platform state a compliance test checks against: users in
// every state and their posts, one of them deleted.
type world struct {
	users map[string]storage.User // by username
	posts map[string]int64        // by label
}

type userToken struct{ token, secret string }

// post creates a post through the API as user (OAuth 1.0a user context).
func (s *stack) post(tok userToken, text string) int64 {
	s.t.Helper()
	resp := s.signed(tok, http.MethodPost, "/2/tweets", map[string]any{"text": text})
	if resp.Status != http.StatusCreated {
		s.t.Fatalf("create post: %d %s", resp.Status, resp.Raw)
	}
	data := resp.Body["data"].(map[string]any)
	if data["text"] != text {
		s.t.Fatalf("created post text %v, want %q", data["text"], text)
	}
	id, ok := validation.ParseID(data["id"].(string))
	if !ok {
		s.t.Fatalf("created post id %v is not a core id", data["id"])
	}
	return id
}

func (s *stack) signed(tok userToken, method, path string, body any) response {
	s.t.Helper()
	req := s.newRequest(method, path, body)
	if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, tok.token, tok.secret, time.Now(), ""); err != nil {
		s.t.Fatalf("sign request: %v", err)
	}
	return s.send(req)
}

func (s *stack) userToken(username string) userToken {
	s.t.Helper()
	s.run("admin", "user", "create", "--username", username)
	var out map[string]string
	s.runJSON(&out, "admin", "token", "create", "--app", "aviary-demo", "--user", username)
	return userToken{out["access_token"], out["access_token_secret"]}
}

// buildWorld creates users in every compliance state with posts, through
// the admin CLI and the posts API.
func buildWorld(s *stack) world {
	s.t.Helper()
	w := world{users: map[string]storage.User{}, posts: map[string]int64{}}
	states := map[string]string{"alice": "", "bob": "suspended", "carol": "protected", "dave": "deactivated", "erin": "deleted"}
	names := []string{"alice", "bob", "carol", "dave", "erin"}
	for _, name := range names {
		tok := s.userToken(name)
		w.posts[name] = s.post(tok, "hello from "+name)
		if name == "alice" {
			w.posts["alice-deleted"] = s.post(tok, "soon gone")
			if resp := s.signed(tok, http.MethodDelete, "/2/tweets/"+ids.Format(w.posts["alice-deleted"]), nil); resp.Status != http.StatusOK ||
				resp.Body["data"].(map[string]any)["deleted"] != true {
				s.t.Fatalf("delete post: %d %s", resp.Status, resp.Raw)
			}
		}
	}
	for _, name := range names {
		if states[name] != "" {
			s.run("admin", "user", "state", "--user", name, "--state", states[name])
		}
		u, err := s.db.UserByUsername(context.Background(), name)
		if err != nil {
			s.t.Fatalf("load %s: %v", name, err)
		}
		w.users[name] = u
	}
	return w
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

func resultLine(id int64, created, redacted time.Time, reason string) string {
	return fmt.Sprintf(`{"id":"%d","action":"delete","created_at":"%s","redacted_at":"%s","reason":"%s"}`,
		id, stamp(created), stamp(redacted), reason)
}

func (s *stack) mustPost(id int64) storage.Post {
	p, err := s.db.PostByID(context.Background(), id)
	if err != nil {
		s.t.Fatalf("load post %d: %v", id, err)
	}
	return p
}

// runJob creates a job, uploads body with a plain HTTP client, waits for a
// final status and returns the job object and the downloaded result.
func (s *stack) runJob(jobType, body string) (map[string]any, string) {
	s.t.Helper()
	job := s.createJob(jobType, "e2e-"+jobType)
	s.upload(job["upload_url"].(string), body)
	job = s.waitJob(job["id"].(string), 90*time.Second)
	if job["status"] != string(storage.JobComplete) {
		s.t.Fatalf("job ended %v: %v", job["status"], job)
	}
	return job, s.download(job["download_url"].(string))
}

func (s *stack) createJob(jobType, name string) map[string]any {
	s.t.Helper()
	resp := s.do(http.MethodPost, "/2/compliance/jobs", s.bearer(), map[string]any{"type": jobType, "name": name})
	if resp.Status != http.StatusOK {
		s.t.Fatalf("create job: %d %s", resp.Status, resp.Raw)
	}
	return resp.Body["data"].(map[string]any)
}

func (s *stack) upload(url, body string) {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPut, url, strings.NewReader(body))
	if err != nil {
		s.t.Fatalf("build upload: %v", err)
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := s.client.Do(req)
	if err != nil {
		s.t.Fatalf("upload: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("upload: %d %s", resp.StatusCode, b)
	}
}

func (s *stack) download(url string) string {
	s.t.Helper()
	resp, err := s.client.Get(url)
	if err != nil {
		s.t.Fatalf("download: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("download: %d %v %s", resp.StatusCode, err, b)
	}
	return string(b)
}

// waitJob polls the job like a client would until it is complete or failed.
func (s *stack) waitJob(id string, timeout time.Duration) map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp := s.do(http.MethodGet, "/2/compliance/jobs/"+id, s.bearer(), nil)
		if resp.Status != http.StatusOK {
			s.t.Fatalf("get job: %d %s", resp.Status, resp.Raw)
		}
		job := resp.Body["data"].(map[string]any)
		if st := job["status"]; st == string(storage.JobComplete) || st == string(storage.JobFailed) {
			return job
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("job %s still %v after %s", id, job["status"], timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestComplianceEndToEnd runs the compliance flow on both blob drivers,
// and on a Redis Cluster and a Redis Sentinel set of the test's own
// (docs/redis.md).
func TestComplianceEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name, driver string
		redisURL     func(testing.TB) string // nil: the shared test Redis
	}{
		{name: "s3", driver: "s3"},
		{name: "local", driver: "local"},
		{name: "redis-cluster", driver: "local", redisURL: func(t testing.TB) string { return storagetest.RedisCluster(t).URL() }},
		{name: "redis-sentinel", driver: "local", redisURL: func(t testing.TB) string { return storagetest.RedisSentinel(t).URL(0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := stackOptions{driver: tc.driver, workers: 1}
			if tc.redisURL != nil {
				opts.redisURL = tc.redisURL(t)
			}
			s := newStack(t, opts)
			w := buildWorld(s)
			t.Run("tweets", func(t *testing.T) { checkTweetsJob(t, s, w) })
			t.Run("users", func(t *testing.T) { checkUsersJob(t, s, w) })
			t.Run("listing", func(t *testing.T) { checkListing(t, s) })
			t.Run("operations", func(t *testing.T) { checkOperations(t, s) })
		})
	}
}

func checkTweetsJob(t *testing.T, s *stack, w world) {
	upload := strings.Join([]string{
		ids.Format(w.posts["alice"]),         // live: no line
		ids.Format(w.posts["alice-deleted"]), // deleted post
		"not-an-id",                          // malformed
		ids.Format(w.posts["bob"]) + "\r",    // suspended author, CRLF line
		"",                                   // blank line: ignored
		ids.Format(w.posts["carol"]),         // protected author
		"99999999999999999999",               // too long: malformed
		ids.Format(w.posts["dave"]),          // deactivated author
		"123",                                // unknown id: no line
		ids.Format(w.posts["erin"]),          // deleted author
	}, "\n") + "\n"
	job, result := s.runJob("tweets", upload)
	deleted := s.mustPost(w.posts["alice-deleted"])
	want := []string{
		resultLine(deleted.ID, deleted.CreatedAt, *deleted.DeletedAt, "deleted"),
		resultLine(w.posts["bob"], s.mustPost(w.posts["bob"]).CreatedAt, *w.users["bob"].SuspendedAt, "suspended"),
		resultLine(w.posts["carol"], s.mustPost(w.posts["carol"]).CreatedAt, *w.users["carol"].ProtectedAt, "protected"),
		resultLine(w.posts["dave"], s.mustPost(w.posts["dave"]).CreatedAt, *w.users["dave"].DeactivatedAt, "deactivated"),
		resultLine(w.posts["erin"], s.mustPost(w.posts["erin"]).CreatedAt, *w.users["erin"].DeletedAt, "deleted"),
	}
	if got := strings.Split(strings.TrimSuffix(result, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("result lines:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	id, _ := validation.ParseID(job["id"].(string))
	rec, err := s.db.ComplianceJob(context.Background(), id)
	if err != nil {
		t.Fatalf("load job record: %v", err)
	}
	if rec.LinesRead != 9 || rec.MalformedLines != 2 || rec.ResultLines != 5 || rec.Attempts != 1 {
		t.Fatalf("job counters lines=%d malformed=%d results=%d attempts=%d; want 9, 2, 5, 1",
			rec.LinesRead, rec.MalformedLines, rec.ResultLines, rec.Attempts)
	}
}

func checkUsersJob(t *testing.T, s *stack, w world) {
	var lines []string
	for _, name := range []string{"erin", "alice", "dave", "carol", "bob"} {
		lines = append(lines, ids.Format(w.users[name].ID))
	}
	_, result := s.runJob("users", strings.Join(lines, "\n")) // no trailing newline
	u := w.users
	want := []string{
		resultLine(u["erin"].ID, u["erin"].CreatedAt, *u["erin"].DeletedAt, "deleted"),
		resultLine(u["dave"].ID, u["dave"].CreatedAt, *u["dave"].DeactivatedAt, "deactivated"),
		resultLine(u["carol"].ID, u["carol"].CreatedAt, *u["carol"].ProtectedAt, "protected"),
		resultLine(u["bob"].ID, u["bob"].CreatedAt, *u["bob"].SuspendedAt, "suspended"),
	}
	if got := strings.TrimSuffix(result, "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("result:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

var jobIDRE = regexp.MustCompile(`^[0-9]{1,19}$`)

func checkListing(t *testing.T, s *stack) {
	created := s.createJob("users", "listing")
	if !jobIDRE.MatchString(created["id"].(string)) || created["status"] != "created" || created["resumable"] != false {
		t.Fatalf("unexpected new job %v", created)
	}
	createdAt, _ := time.Parse(time.RFC3339, created["created_at"].(string))
	for field, ttl := range map[string]time.Duration{"upload_expires_at": 15 * time.Minute, "download_expires_at": 7 * 24 * time.Hour} {
		exp, err := time.Parse(time.RFC3339, created[field].(string))
		if err != nil || exp.Sub(createdAt) != ttl {
			t.Errorf("%s = %v; want created_at + %s", field, created[field], ttl)
		}
	}
	resp := s.do(http.MethodGet, "/2/compliance/jobs?type=users", s.bearer(), nil)
	data := resp.Body["data"].([]any)
	if resp.Status != 200 || len(data) != 2 || resp.Body["meta"].(map[string]any)["result_count"] != float64(2) {
		t.Fatalf("list users jobs: %d %s", resp.Status, resp.Raw)
	}
	if data[0].(map[string]any)["id"] != created["id"] {
		t.Errorf("newest job first: got %v", data[0])
	}
	resp = s.do(http.MethodGet, "/2/compliance/jobs?type=users&status=complete&compliance_job.fields=status,type", s.bearer(), nil)
	data = resp.Body["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("status filter: %s", resp.Raw)
	}
	keys := []string{}
	for k := range data[0].(map[string]any) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// compliance_job.fields adds to the defaults (every field, name as the
	// job has one), it never removes one (docs/compliance-api.md).
	if strings.Join(keys, ",") != "created_at,download_expires_at,download_url,id,name,resumable,status,type,upload_expires_at,upload_url" {
		t.Errorf("fields selection gave keys %v", keys)
	}
	var other map[string]string
	s.runJSON(&other, "admin", "app", "create", "--name", "other-app")
	if resp := s.do(http.MethodGet, "/2/compliance/jobs/"+created["id"].(string), "Bearer "+other["bearer_token"], nil); resp.Status != http.StatusNotFound {
		t.Errorf("other app sees job: %d %s", resp.Status, resp.Raw)
	}
	if resp := s.do(http.MethodGet, "/2/compliance/jobs?type=users", "Bearer "+other["bearer_token"], nil); len(resp.Body["data"].([]any)) != 0 {
		t.Errorf("other app lists jobs: %s", resp.Raw)
	}
}

func checkOperations(t *testing.T, s *stack) {
	m := s.do(http.MethodGet, "/metrics", "", nil)
	for _, want := range []string{`aviary_http_requests_total{method="POST",route="POST /2/compliance/jobs",status="200"}`, "asynq_tasks_processed_total"} {
		if !strings.Contains(string(m.Raw), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	checkWorkerMetrics(t, s)
	if r := s.do(http.MethodGet, "/admin/queues/", "", nil); r.Status != http.StatusUnauthorized {
		t.Errorf("dashboard without credentials: %d", r.Status)
	}
	req, _ := http.NewRequest(http.MethodGet, s.baseURL+"/admin/queues/api/queues", nil)
	req.SetBasicAuth("admin", "secret")
	r := s.send(req)
	if r.Status != http.StatusOK || !strings.Contains(string(r.Raw), `"queue":"compliance"`) {
		t.Errorf("dashboard api with credentials: %d %.300s", r.Status, r.Raw)
	}
}

// checkWorkerMetrics reads the first worker's own /metrics: the jobs run so
// far were counted as successful compliance:process runs.
func checkWorkerMetrics(t *testing.T, s *stack) {
	req, _ := http.NewRequest(http.MethodGet, s.workerMetrics, nil)
	r := s.send(req)
	want := `aviary_task_runs_total{outcome="success",type="compliance:process"} 2`
	if r.Status != http.StatusOK || !strings.Contains(string(r.Raw), want) || !strings.Contains(string(r.Raw), "go_goroutines") {
		t.Errorf("worker metrics: %d, want %s and Go metrics in:\n%.2000s", r.Status, want, r.Raw)
	}
}
