package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// jobFamilies are the matrix's job families: compliance, media, audiences,
// catalogs, insights.
func jobFamilies() []family {
	return []family{&complianceFamily{}, &mediaFamily{}, &audienceFamily{}, &catalogFamily{}, &insightsFamily{}}
}

// errNoAnswer marks a request that was sent but not answered (a replica
// killed, a connection cut): its effect is unknown.
var errNoAnswer = errors.New("no answer")

// call sends one request to base with a per-request timeout; auth is
// "bearer", "user" (OAuth 1.0a as the demo user) or "" (none). A transport
// failure is errNoAnswer.
func (e *matrixEnv) call(ctx context.Context, base, authz, method, path string, body []byte, contentType string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return e.send(req, authz)
}

func (e *matrixEnv) send(req *http.Request, authz string) (int, []byte, error) {
	s := e.s
	switch authz {
	case "bearer":
		req.Header.Set("Authorization", s.bearer())
	case "", "none":
	default: // an Authorization header value of its own ("Bearer ...")
		req.Header.Set("Authorization", authz)
	case "user":
		// Signed against the public base URL, which every replica verifies with.
		u := *req.URL
		if err := auth.SignRequest(req, s.baseURL, s.creds.ConsumerKey, s.creds.ConsumerSecret, s.creds.AccessToken, s.creds.AccessTokenSecret, time.Now(), ""); err != nil {
			return 0, nil, err
		}
		req.URL = &u
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, raw, fmt.Errorf("%w: %v", errNoAnswer, err)
	}
	return resp.StatusCode, raw, nil
}

// callJSON is call with a JSON body (nil: none).
func (e *matrixEnv) callJSON(ctx context.Context, base, authz, method, path string, body any) (int, []byte, error) {
	if body == nil {
		return e.call(ctx, base, authz, method, path, nil, "")
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return 0, nil, err
	}
	return e.call(ctx, base, authz, method, path, raw, "application/json")
}

// retry runs f on replica after replica (with a pause after a failure)
// until f reports done, ctx ends or the budget is used; it returns whether
// f ever succeeded.
func retry(ctx context.Context, budget time.Duration, f func(attempt int) bool) bool {
	deadline := time.Now().Add(budget)
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		if f(attempt) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(300 * time.Millisecond):
		}
	}
	return false
}

// pace waits d or until ctx ends (false then).
func pace(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func dataOf(raw []byte) map[string]any {
	var body struct {
		Data map[string]any `json:"data"`
	}
	_ = json.Unmarshal(raw, &body)
	return body.Data
}

// waitFinal polls check until it reports final or ctx ends.
func waitFinal(ctx context.Context, check func() bool) bool {
	for {
		if check() {
			return true
		}
		if !pace(ctx, 250*time.Millisecond) {
			return check()
		}
	}
}

// settleCtx is a context for the families' database reads during settle.
func pgQuery[T any](ctx context.Context, env *matrixEnv, sql string, args ...any) (T, error) {
	var v T
	conn, err := pgx.Connect(ctx, env.s.dbURL)
	if err != nil {
		return v, err
	}
	defer conn.Close(context.Background())
	err = conn.QueryRow(ctx, sql, args...).Scan(&v)
	return v, err
}

// ---- compliance ----

// complianceFamily creates tweets compliance jobs of complianceIDs
// deleted posts each: a complete job's result has one line per id.
type complianceFamily struct {
	mu     sync.Mutex
	upload string
	lines  int
	// live and deleted are the ids of the posts the uploads name.
	live, deleted []int64
	rep           familyReport
	accepted      []int64 // jobs created and uploaded
	created       int     // jobs created but never uploaded (abandoned by the client)
	refused       map[string]int
	// probeAuthz and longAuthz are the bearer tokens of two apps of their
	// own for the recovery probe and the matrix's long jobs: one job per
	// app and type runs at a time, so on the workload's app they would
	// wait for its jobs (a 409) and measure that rule, not the recovery.
	probeAuthz, longAuthz string
}

const complianceIDs = 20

func (f *complianceFamily) name() string { return "compliance" }

func (f *complianceFamily) prepare(ctx context.Context, env *matrixEnv) error {
	conn, err := pgx.Connect(ctx, env.s.dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	rows, _ := conn.Query(ctx, `WITH u AS (INSERT INTO users (username) VALUES ('faultscompliance') RETURNING id)
		INSERT INTO posts (author_id, text, deleted_at) SELECT u.id, 'kept ' || g, CASE WHEN g > $1 THEN now() END
		FROM u, generate_series(1, 2 * $1) g RETURNING id, deleted_at IS NOT NULL`, complianceIDs)
	var id int64
	var deleted bool
	_, err = pgx.ForEachRow(rows, []any{&id, &deleted}, func() error {
		if deleted {
			f.deleted = append(f.deleted, id)
		} else {
			f.live = append(f.live, id)
		}
		return nil
	})
	if err != nil || len(f.deleted) != complianceIDs {
		return fmt.Errorf("seed compliance posts: %v", err)
	}
	ids := f.deleted
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%d\n", id)
	}
	f.upload, f.lines = b.String(), len(ids)
	f.rep.family = f.name()
	for name, authz := range map[string]*string{"faults-probe": &f.probeAuthz, "faults-long": &f.longAuthz} {
		var app map[string]string
		env.s.runJSON(&app, "admin", "app", "create", "--name", name)
		*authz = "Bearer " + app["bearer_token"]
	}
	return nil
}

// submitBody creates one job as authz ("bearer": the workload's app) and
// uploads upload; it returns the job id (0 when not accepted), whether the
// upload was accepted, whether the creation went unanswered, and why
// ("" when the job was created and uploaded).
func (f *complianceFamily) submitBody(ctx context.Context, env *matrixEnv, authz string, i int, upload string) (id int64, uploaded, unknown bool, why string) {
	st, raw, err := env.callJSON(ctx, env.api(i), authz, http.MethodPost, "/2/compliance/jobs",
		map[string]any{"type": "tweets", "name": fmt.Sprintf("faults-%d", i)})
	if err != nil || st != http.StatusOK {
		if err != nil {
			return 0, false, errors.Is(err, errNoAnswer), "create: no answer"
		}
		return 0, false, false, fmt.Sprintf("create: %d", st)
	}
	job := dataOf(raw)
	id, _ = validation.ParseID(fmt.Sprint(job["id"]))
	uploadURL, _ := job["upload_url"].(string)
	last := ""
	uploaded = retry(ctx, 90*time.Second, func(int) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, uploadURL, strings.NewReader(upload))
		if err != nil {
			return false
		}
		req.Header.Set("Content-Type", "text/plain")
		st, _, err := env.send(req, "")
		if err != nil {
			last = "upload: no answer"
		} else {
			last = fmt.Sprintf("upload: %d", st)
		}
		return err == nil && st == http.StatusOK
	})
	if uploaded {
		last = ""
	}
	return id, uploaded, false, last
}

// longUpload is an upload of lines ids, one deleted post's id in 1,000
// (the rest live posts), and the number of result lines it must give.
func (f *complianceFamily) longUpload(lines int) (string, int) {
	var b strings.Builder
	want := 0
	for i := range lines {
		if i%1000 == 0 {
			fmt.Fprintf(&b, "%d\n", f.deleted[(i/1000)%len(f.deleted)])
			want++
		} else {
			fmt.Fprintf(&b, "%d\n", f.live[i%len(f.live)])
		}
	}
	return b.String(), want
}

func (f *complianceFamily) run(ctx context.Context, env *matrixEnv) {
	f.refused = map[string]int{}
	for i := 0; ctx.Err() == nil; i++ {
		id, uploaded, unknown, why := f.submitBody(ctx, env, "bearer", i, f.upload)
		f.mu.Lock()
		if why != "" && !unknown {
			f.refused[why]++
		}
		f.rep.submitted++
		switch {
		case unknown:
			f.rep.unknown++
		case id != 0 && uploaded:
			f.rep.accepted++
			f.accepted = append(f.accepted, id)
		case id != 0:
			f.created++
		}
		f.mu.Unlock()
		pace(ctx, 400*time.Millisecond)
	}
}

func (f *complianceFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	r := f.rep
	for _, id := range f.accepted {
		var job storage.ComplianceJob
		ok := waitFinal(ctx, func() bool {
			j, err := env.s.db.ComplianceJob(ctx, id)
			job = j
			return err == nil && j.Status.Final()
		})
		if !ok {
			r.lost++
			r.problems = append(r.problems, fmt.Sprintf("job %d still %s", id, job.Status))
			continue
		}
		r.final++
		if job.Status != storage.JobComplete || job.ResultLines != int64(f.lines) {
			r.problems = append(r.problems, fmt.Sprintf("job %d ended %s with %d result lines, want complete with %d", id, job.Status, job.ResultLines, f.lines))
			if job.ResultLines > int64(f.lines) {
				r.duplicated++
			} else {
				r.lost++
			}
			continue
		}
		r.exactlyOnce++
	}
	r.settled = time.Now()
	if f.created > 0 {
		r.notes = append(r.notes, fmt.Sprintf("%d jobs created whose upload never got through (left to expire)", f.created))
	}
	if len(f.refused) > 0 {
		r.notes = append(r.notes, fmt.Sprintf("not accepted: %v (409 on create: one in-progress job per app and type, docs/compliance-lifecycle.md)", f.refused))
	}
	return r
}

// probe runs one compliance job start to finish (the matrix's recovery
// probe); it returns once the job is complete, or false at ctx's end.
func (f *complianceFamily) probe(ctx context.Context, env *matrixEnv) bool {
	return retry(ctx, time.Hour, func(i int) bool {
		id, uploaded, _, _ := f.submitBody(ctx, env, f.probeAuthz, 1000000+i, f.upload)
		if id == 0 || !uploaded {
			return false
		}
		return waitFinal(ctx, func() bool {
			j, err := env.s.db.ComplianceJob(ctx, id)
			return err == nil && j.Status == storage.JobComplete
		})
	})
}

// ---- media ----

// mediaFamily uploads a PNG (every mediaVideoEvery-th upload a one-second
// MP4, transcoded by ffmpeg) in several segments, spread over the
// replicas, through the chunked upload (the segments and the assembled
// media are objects in the matrix's MinIO).
type mediaFamily struct {
	mu       sync.Mutex
	image    []byte
	video    []byte
	rep      familyReport
	accepted []int64 // finalized
	videos   int     // of them videos
	started  int     // initialized, never finalized (a client gave up)
}

const (
	mediaSegment    = 96 << 10
	mediaVideoEvery = 8
)

func (f *mediaFamily) name() string { return "media" }

func (f *mediaFamily) prepare(ctx context.Context, env *matrixEnv) error {
	f.image = noisyPNG(env.s.t, 240, 240)
	f.video = noisyVideo(env.s.t, env.s.t.TempDir(), 1)
	f.rep.family = f.name()
	return nil
}

// isVideo tells whether upload i is a video.
func isVideo(i int) bool { return i%mediaVideoEvery == mediaVideoEvery-1 }

// upload runs initialize, the appends and finalize of upload i (a PNG or,
// by isVideo, an MP4); each step is retried on another replica when it
// gets no answer.
func (f *mediaFamily) upload(ctx context.Context, env *matrixEnv, i int) (id int64, finalized, unknown bool) {
	file, init := f.image, map[string]any{"media_type": "image/png", "media_category": "tweet_image"}
	if isVideo(i) {
		file, init = f.video, map[string]any{"media_type": "video/mp4", "media_category": "tweet_video"}
	}
	init["total_bytes"] = len(file)
	st, raw, err := env.callJSON(ctx, env.api(i), "user", http.MethodPost, "/2/media/upload/initialize", init)
	if err != nil || st != http.StatusOK {
		return 0, false, errors.Is(err, errNoAnswer)
	}
	sid, _ := dataOf(raw)["id"].(string)
	id, _ = validation.ParseID(sid)
	for seg := 0; seg*mediaSegment < len(file); seg++ {
		body, ct := appendBody(multipartMediaLast, seg, file[seg*mediaSegment:min((seg+1)*mediaSegment, len(file))])
		if !retry(ctx, 90*time.Second, func(a int) bool {
			st, _, err := env.call(ctx, env.api(i+seg+a), "user", http.MethodPost, "/2/media/upload/"+sid+"/append", body, ct)
			return err == nil && st == http.StatusOK
		}) {
			return id, false, false
		}
	}
	finalized = retry(ctx, 90*time.Second, func(a int) bool {
		st, _, err := env.call(ctx, env.api(i+a), "user", http.MethodPost, "/2/media/upload/"+sid+"/finalize", nil, "")
		// 409 after a finalize whose answer was lost: finalized already.
		return err == nil && (st == http.StatusOK || (a > 0 && st == http.StatusConflict))
	})
	return id, finalized, false
}

func (f *mediaFamily) run(ctx context.Context, env *matrixEnv) {
	for i := 0; ctx.Err() == nil; i++ {
		id, finalized, unknown := f.upload(ctx, env, i)
		f.mu.Lock()
		f.rep.submitted++
		switch {
		case unknown:
			f.rep.unknown++
		case finalized:
			f.rep.accepted++
			f.accepted = append(f.accepted, id)
			if isVideo(i) {
				f.videos++
			}
		case id != 0:
			f.started++
		}
		f.mu.Unlock()
		pace(ctx, 300*time.Millisecond)
	}
}

func (f *mediaFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	r := f.rep
	for _, id := range f.accepted {
		var m storage.Media
		ok := waitFinal(ctx, func() bool {
			rec, err := env.s.db.Media(ctx, id)
			m = rec
			return err == nil && (rec.State == storage.MediaSucceeded || rec.State == storage.MediaFailed)
		})
		switch {
		case !ok:
			r.lost++
			r.problems = append(r.problems, fmt.Sprintf("media %d still %s", id, m.State))
		case m.State != storage.MediaSucceeded:
			r.final++
			r.lost++
			r.problems = append(r.problems, fmt.Sprintf("media %d ended %s", id, m.State))
		default:
			r.final++
			r.exactlyOnce++
		}
	}
	// Exactly one record per upload: the records of the demo user's
	// uploads of these sizes are the uploads initialized (plus unknowns).
	n, err := pgQuery[int64](ctx, env, `SELECT count(*) FROM media WHERE owner_id = $1 AND total_bytes = ANY($2)`,
		faultsUserID(env.s.creds.UserID), []int64{int64(len(f.image)), int64(len(f.video))})
	inits := int64(len(f.accepted) + f.started)
	if err != nil {
		r.problems = append(r.problems, "count media records: "+err.Error())
	} else if n < inits || n > inits+int64(r.unknown) {
		r.problems = append(r.problems, fmt.Sprintf("%d media records for %d initialized uploads (+%d unknown)", n, inits, r.unknown))
	}
	r.settled = time.Now()
	r.notes = append(r.notes, fmt.Sprintf("%d of the %d finalized uploads were videos (transcoded)", f.videos, len(f.accepted)))
	if f.started > 0 {
		r.notes = append(r.notes, fmt.Sprintf("%d uploads initialized and not finalized (removed at session expiry, 24 h)", f.started))
	}
	return r
}

func faultsUserID(s string) int64 { n, _ := strconv.ParseInt(s, 10, 64); return n }

// ---- audiences ----

// audienceFamily sends users batches to one custom audience: 20 users a
// batch, half of them already sent, each batch retried until answered.
type audienceFamily struct {
	audience string
	rep      familyReport
	distinct map[string]bool
	batches  int
}

func (f *audienceFamily) name() string { return "audiences" }

func (f *audienceFamily) prepare(ctx context.Context, env *matrixEnv) error {
	f.rep.family, f.distinct = f.name(), map[string]bool{}
	path := "/12/accounts/" + env.s.creds.AdsAccountID + "/custom_audiences?" + url.Values{"name": {"faults"}}.Encode()
	st, raw, err := env.callJSON(ctx, env.api(0), "user", http.MethodPost, path, nil)
	if err != nil || st != http.StatusOK {
		return fmt.Errorf("create audience: %d %s %v", st, raw, err)
	}
	f.audience, _ = dataOf(raw)["id"].(string)
	return nil
}

// audienceBatch is batch i's body and its users.
func audienceBatch(i int) ([]byte, []string) {
	var users []any
	var ids []string
	for k := range 20 {
		id := fmt.Sprintf("user-%d", i*10+k) // overlaps the previous batch by 10
		ids = append(ids, id)
		users = append(users, map[string]any{"partner_user_id": []string{id}})
	}
	raw, _ := json.Marshal([]any{map[string]any{"operation_type": "Update", "params": map[string]any{"users": users}}})
	return raw, ids
}

func (f *audienceFamily) run(ctx context.Context, env *matrixEnv) {
	for i := 0; ctx.Err() == nil; i++ {
		body, ids := audienceBatch(i)
		f.rep.submitted++
		path := "/12/accounts/" + env.s.creds.AdsAccountID + "/custom_audiences/" + f.audience + "/users"
		// A retry of the latest batch with the same body records nothing.
		if retry(ctx, 90*time.Second, func(a int) bool {
			st, _, err := env.call(ctx, env.api(i+a), "user", http.MethodPost, path, body, "application/json")
			return err == nil && st == http.StatusOK
		}) {
			f.rep.accepted++
			f.batches++
			for _, id := range ids {
				f.distinct[id] = true
			}
		}
		pace(ctx, 300*time.Millisecond)
	}
}

func (f *audienceFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	r := f.rep
	var pending, applied, members int64
	ok := waitFinal(ctx, func() bool {
		var err error
		pending, err = pgQuery[int64](ctx, env, `SELECT count(*) FROM custom_audience_batches WHERE custom_audience_id = $1 AND state = 'PENDING'`, f.audience)
		return err == nil && pending == 0
	})
	applied, _ = pgQuery[int64](ctx, env, `SELECT count(*) FROM custom_audience_batches WHERE custom_audience_id = $1 AND state = 'APPLIED'`, f.audience)
	members, _ = pgQuery[int64](ctx, env, `SELECT count(*) FROM custom_audience_members WHERE audience_id = $1`, f.audience)
	if !ok {
		r.problems = append(r.problems, fmt.Sprintf("%d batches still PENDING", pending))
	}
	r.final = int(applied)
	switch {
	case applied < int64(f.batches):
		r.lost = f.batches - int(applied)
		r.problems = append(r.problems, fmt.Sprintf("%d batches APPLIED of %d accepted", applied, f.batches))
	case applied > int64(f.batches):
		r.duplicated = int(applied) - f.batches
		r.problems = append(r.problems, fmt.Sprintf("%d batches APPLIED of %d accepted (a retry recorded twice)", applied, f.batches))
	default:
		r.exactlyOnce = int(applied)
	}
	if members != int64(len(f.distinct)) {
		r.problems = append(r.problems, fmt.Sprintf("audience has %d members, %d distinct users were sent", members, len(f.distinct)))
	}
	r.notes = append(r.notes, fmt.Sprintf("audience members %d = distinct users sent %d", members, len(f.distinct)))
	r.settled = time.Now()
	return r
}

// ---- catalogs ----

// catalogFamily sends product batches (5 new products each, every image
// on env.images) to one catalog, each retried until answered; the image
// checks are worker tasks.
type catalogFamily struct {
	catalog  string
	rep      familyReport
	products int
}

func (f *catalogFamily) name() string { return "catalogs" }

func (f *catalogFamily) prepare(ctx context.Context, env *matrixEnv) error {
	f.rep.family = f.name()
	path := "/12/product_catalogs?" + url.Values{"name": {"faults"}, "user_id": {env.s.creds.UserID}}.Encode()
	st, raw, err := env.callJSON(ctx, env.api(0), "user", http.MethodPost, path, nil)
	if err != nil || st != http.StatusOK {
		return fmt.Errorf("create catalog: %d %s %v", st, raw, err)
	}
	f.catalog, _ = dataOf(raw)["id"].(string)
	return nil
}

func (f *catalogFamily) run(ctx context.Context, env *matrixEnv) {
	for i := 0; ctx.Err() == nil; i++ {
		var batch []any
		for k := range 5 {
			batch = append(batch, catalogProduct(fmt.Sprintf("p%d", i*5+k), env.images+"/ok.png"))
		}
		f.rep.submitted++
		if retry(ctx, 90*time.Second, func(a int) bool {
			st, _, err := env.callJSON(ctx, env.api(i+a), "user", http.MethodPut, "/12/product_catalogs/"+f.catalog+"/products", map[string]any{"products": batch})
			return err == nil && st == http.StatusOK
		}) {
			f.rep.accepted++
			f.products += len(batch)
		}
		pace(ctx, 300*time.Millisecond)
	}
}

func (f *catalogFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	r := f.rep
	var pending int64
	ok := waitFinal(ctx, func() bool {
		var err error
		pending, err = pgQuery[int64](ctx, env, `SELECT count(*) FROM products WHERE catalog_id = $1 AND status = 'PENDING'`, f.catalog)
		return err == nil && pending == 0
	})
	if !ok {
		r.problems = append(r.problems, fmt.Sprintf("%d products still PENDING", pending))
	}
	total, _ := pgQuery[int64](ctx, env, `SELECT count(*) FROM products WHERE catalog_id = $1`, f.catalog)
	accepted, _ := pgQuery[int64](ctx, env, `SELECT count(*) FROM products WHERE catalog_id = $1 AND status = 'ACCEPTED'`, f.catalog)
	checked, _ := pgQuery[int64](ctx, env, `SELECT count(*) FROM products WHERE catalog_id = $1 AND images_checked_version = version`, f.catalog)
	r.final = int(accepted)
	if total != int64(f.products) {
		r.problems = append(r.problems, fmt.Sprintf("catalog has %d products, %d were sent", total, f.products))
	}
	if accepted != total || checked != total {
		r.lost = int(total - accepted)
		r.problems = append(r.problems, fmt.Sprintf("%d of %d products ACCEPTED, %d checked at their version", accepted, total, checked))
	} else {
		r.exactlyOnce = int(accepted)
	}
	r.notes = append(r.notes, fmt.Sprintf("catalog products %d = sent %d", total, f.products))
	r.settled = time.Now()
	return r
}

// ---- insights ----

// insightsFamily posts texts with a marker word; the insights worker
// drains the change log into hourly term counts, which must equal a direct
// count of the live posts.
type insightsFamily struct {
	rep   familyReport
	posts []int64
}

const insightsMarker = "faultmatrix"

func (f *insightsFamily) name() string { return "insights" }

func (f *insightsFamily) prepare(ctx context.Context, env *matrixEnv) error {
	f.rep.family = f.name()
	return nil
}

func (f *insightsFamily) run(ctx context.Context, env *matrixEnv) {
	for i := 0; ctx.Err() == nil; i++ {
		f.rep.submitted++
		st, raw, err := env.callJSON(ctx, env.api(i), "user", http.MethodPost, "/2/tweets",
			map[string]any{"text": fmt.Sprintf("%s w%d number %d", insightsMarker, i%5, i)})
		switch {
		case errors.Is(err, errNoAnswer):
			f.rep.unknown++
		case err == nil && st == http.StatusCreated:
			id, _ := validation.ParseID(fmt.Sprint(dataOf(raw)["id"]))
			f.rep.accepted++
			f.posts = append(f.posts, id)
		}
		pace(ctx, 150*time.Millisecond)
	}
}

func (f *insightsFamily) settle(ctx context.Context, env *matrixEnv) familyReport {
	r := f.rep
	var backlog int64
	ok := waitFinal(ctx, func() bool {
		var err error
		backlog, err = pgQuery[int64](ctx, env, `SELECT count(*) FROM insight_changes`)
		return err == nil && backlog == 0
	})
	if !ok {
		r.problems = append(r.problems, fmt.Sprintf("the insights change log still holds %d changes", backlog))
	}
	live, _ := pgQuery[int64](ctx, env, `SELECT count(*) FROM posts WHERE id = ANY($1) AND deleted_at IS NULL`, f.posts)
	all, _ := pgQuery[int64](ctx, env, `SELECT count(*) FROM posts WHERE text LIKE $1 || ' %' AND deleted_at IS NULL`, insightsMarker)
	if live != int64(len(f.posts)) {
		r.lost += len(f.posts) - int(live)
		r.problems = append(r.problems, fmt.Sprintf("%d of %d accepted posts found", live, len(f.posts)))
	}
	if all < live || all > live+int64(r.unknown) {
		r.problems = append(r.problems, fmt.Sprintf("%d marked posts for %d accepted and %d unknown", all, live, r.unknown))
	}
	// Aggregates against a direct count, hour by hour.
	diff, err := pgQuery[string](ctx, env, `WITH want AS (
			SELECT date_trunc('hour', created_at) AS hour, count(*) AS n FROM posts
			WHERE text LIKE $1 || ' %' AND deleted_at IS NULL GROUP BY 1),
		got AS (SELECT hour, posts AS n FROM insight_term_hours WHERE term = $1 AND country_code = '*')
		SELECT coalesce(string_agg(coalesce(want.hour, got.hour)::text || ': ' || coalesce(got.n, 0) || ' counted, ' || coalesce(want.n, 0) || ' posts', '; '), '')
		FROM want FULL JOIN got ON want.hour = got.hour WHERE coalesce(want.n, 0) <> coalesce(got.n, 0)`, insightsMarker)
	switch {
	case err != nil:
		r.problems = append(r.problems, "compare insights: "+err.Error())
	case diff != "":
		r.problems = append(r.problems, "insight_term_hours differ from the posts: "+diff)
		r.lost++
	default:
		r.final, r.exactlyOnce = int(all), int(all)
	}
	r.notes = append(r.notes, fmt.Sprintf("%d marked posts counted once each in insight_term_hours", all))
	r.settled = time.Now()
	return r
}
