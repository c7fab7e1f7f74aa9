package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// flow is one part of the mix: an attack of its own at weight% of the
// total rate. start makes a fresh first request; a flow of several steps
// (media upload, compliance job) queues its next step in follow from the
// answer of the previous one, and the targeter serves queued steps first,
// so the flow's rate counts every request it sends.
type flow struct {
	name     string
	weight   int // percent of the total rate
	start    func(*vegeta.Target) error
	follow   chan func(*vegeta.Target) error
	onResult func(*vegeta.Result)
}

func (f *flow) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		select {
		case next := <-f.follow:
			return next(t)
		default:
			return f.start(t)
		}
	}
}

// then queues a follow-up step (dropped, and counted, if the queue is full).
func (f *flow) then(m *mix, step func(*vegeta.Target) error) {
	select {
	case f.follow <- step:
	default:
		m.dropped.Add(1)
	}
}

// mix is the load: its flows and what they record for the checks.
type mix struct {
	c        *client
	posts    *ring
	listID   string
	png      []byte
	seq      atomic.Uint64
	dropped  atomic.Int64
	mu       sync.Mutex
	jobs     []string // compliance jobs whose upload was accepted
	finals   int      // media uploads finalized (200)
	batches  int      // do-not-reach batches accepted (200)
	flows    []*flow
	idsLines int
}

// weights is the mix, in percent of the total rate (docs/load.md).
var weights = []struct {
	name   string
	weight int
}{
	{"read post", 30},         // GET /2/tweets/{id}
	{"search", 15},            // GET /2/tweets/search/recent
	{"users/me", 10},          // GET /2/users/me
	{"create post", 15},       // POST /2/tweets
	{"media upload", 15},      // initialize, append, finalize (one small PNG)
	{"compliance job", 10},    // POST /2/compliance/jobs, PUT upload_url
	{"do-not-reach batch", 5}, // POST /12/batch/.../do_not_reach_lists/{id}/users
}

func newMix(c *client, posts *ring, listID string, idsLines int) (*mix, error) {
	img, err := smallPNG()
	if err != nil {
		return nil, err
	}
	m := &mix{c: c, posts: posts, listID: listID, png: img, idsLines: idsLines}
	builders := map[string]func(*flow){
		"read post": m.readPost, "search": m.search, "users/me": m.usersMe, "create post": m.createPost,
		"media upload": m.media, "compliance job": m.compliance, "do-not-reach batch": m.doNotReach,
	}
	for _, w := range weights {
		f := &flow{name: w.name, weight: w.weight, follow: make(chan func(*vegeta.Target) error, 10000), onResult: func(*vegeta.Result) {}}
		builders[w.name](f)
		m.flows = append(m.flows, f)
	}
	return m, nil
}

func (m *mix) readPost(f *flow) {
	f.start = func(t *vegeta.Target) error {
		*t = m.c.bearer(http.MethodGet, m.c.base+"/2/tweets/"+m.posts.pick(m.seq.Add(1))+"?tweet.fields=created_at,public_metrics&expansions=author_id", nil, "")
		return nil
	}
}

var queries = []string{"hello", "aviary", "#load", "bird OR rate", `"fixed rate"`, "hello -is:retweet"}

func (m *mix) search(f *flow) {
	f.start = func(t *vegeta.Target) error {
		q := queries[m.seq.Add(1)%uint64(len(queries))]
		*t = m.c.bearer(http.MethodGet, m.c.base+"/2/tweets/search/recent?query="+url.QueryEscape(q)+"&max_results=10", nil, "")
		return nil
	}
}

func (m *mix) usersMe(f *flow) {
	f.start = func(t *vegeta.Target) (err error) {
		*t, err = m.c.user(http.MethodGet, m.c.base+"/2/users/me", nil, "")
		return err
	}
}

func (m *mix) createPost(f *flow) {
	f.start = func(t *vegeta.Target) (err error) {
		n := m.seq.Add(1)
		body, _ := json.Marshal(map[string]string{"text": fmt.Sprintf("load %d %d: hello aviary #load, a bird at a fixed rate", time.Now().UnixNano(), n)})
		*t, err = m.c.user(http.MethodPost, m.c.base+"/2/tweets", body, "application/json")
		return err
	}
	f.onResult = func(r *vegeta.Result) {
		if id := dataField(r, http.StatusCreated, "id"); id != "" {
			m.posts.add(id)
		}
	}
}

// media: initialize -> append (one JSON segment) -> finalize, which for an
// image answers once a worker processed it.
func (m *mix) media(f *flow) {
	f.start = func(t *vegeta.Target) (err error) {
		body := fmt.Appendf(nil, `{"media_type":"image/png","media_category":"tweet_image","total_bytes":%d}`, len(m.png))
		*t, err = m.c.user(http.MethodPost, m.c.base+"/2/media/upload/initialize", body, "application/json")
		return err
	}
	seg := fmt.Appendf(nil, `{"segment_index":0,"media":%q}`, base64.StdEncoding.EncodeToString(m.png))
	f.onResult = func(r *vegeta.Result) {
		switch {
		case strings.HasSuffix(r.URL, "/initialize"):
			if id := dataField(r, http.StatusOK, "id"); id != "" {
				f.then(m, func(t *vegeta.Target) (err error) {
					*t, err = m.c.user(http.MethodPost, m.c.base+"/2/media/upload/"+id+"/append", seg, "application/json")
					return err
				})
			}
		case strings.HasSuffix(r.URL, "/append") && r.Code == http.StatusOK:
			u := strings.TrimSuffix(r.URL, "/append") + "/finalize"
			f.then(m, func(t *vegeta.Target) (err error) {
				*t, err = m.c.user(http.MethodPost, u, nil, "")
				return err
			})
		case strings.HasSuffix(r.URL, "/finalize") && r.Code == http.StatusOK:
			m.mu.Lock()
			m.finals++
			m.mu.Unlock()
		}
	}
}

// compliance: create a tweets job (apps in turn), then PUT idsLines post
// ids (known and unknown) to its upload_url; a worker processes it. A 409
// is the platform's answer while the app's previous job still runs.
func (m *mix) compliance(f *flow) {
	f.start = func(t *vegeta.Target) error {
		app := m.c.bearers[m.seq.Add(1)%uint64(len(m.c.bearers))]
		*t = m.c.bearerOf(app, http.MethodPost, m.c.base+"/2/compliance/jobs", []byte(`{"type":"tweets","name":"load"}`), "application/json")
		return nil
	}
	f.onResult = func(r *vegeta.Result) {
		if r.Method == http.MethodPost {
			up, id := dataField(r, http.StatusOK, "upload_url"), dataField(r, http.StatusOK, "id")
			if up == "" {
				return
			}
			ids := m.idsFile(m.idsLines)
			f.then(m, func(t *vegeta.Target) error {
				*t = vegeta.Target{Method: http.MethodPut, URL: up + "#" + id, Body: ids, Header: http.Header{"Content-Type": {"text/plain"}}}
				return nil
			})
			return
		}
		if r.Code == http.StatusOK {
			m.mu.Lock()
			m.jobs = append(m.jobs, r.URL[strings.LastIndexByte(r.URL, '#')+1:])
			m.mu.Unlock()
		}
	}
}

// idsFile is n lines of post ids: every other one a post of the run, the
// rest ids nothing has.
func (m *mix) idsFile(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		if id := m.posts.pick(m.seq.Add(1)); i%2 == 0 && id != "" {
			b.WriteString(id)
		} else {
			fmt.Fprintf(&b, "%d", 1_000_000_000_000+m.seq.Add(1))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// doNotReach sends a batch of 100 hashed e-mail addresses to the list.
func (m *mix) doNotReach(f *flow) {
	f.start = func(t *vegeta.Target) (err error) {
		*t, err = m.c.user(http.MethodPost, m.c.base+"/12/batch/accounts/"+m.c.creds.AdsAccountID+"/do_not_reach_lists/"+m.listID+"/users",
			m.dnrBatch(100), "application/json")
		return err
	}
	f.onResult = func(r *vegeta.Result) {
		if r.Code == http.StatusOK {
			m.mu.Lock()
			m.batches++
			m.mu.Unlock()
		}
	}
}

func (m *mix) dnrBatch(n int) []byte {
	emails := make([]string, n)
	for i := range emails {
		sum := sha256.Sum256(fmt.Appendf(nil, "load-%d-%d@example.com", time.Now().UnixNano(), m.seq.Add(1)))
		emails[i] = hex.EncodeToString(sum[:])
	}
	body, _ := json.Marshal([]map[string]any{{"operation_type": "Update", "params": map[string]any{"users": []map[string]any{{"email": emails}}}}})
	return body
}

// dataField is data.<key> of a JSON answer with the wanted status ("" else).
func dataField(r *vegeta.Result, status int, key string) string {
	if int(r.Code) != status {
		return ""
	}
	var out struct {
		Data map[string]any `json:"data"`
	}
	if json.Unmarshal(r.Body, &out) != nil {
		return ""
	}
	s, _ := out.Data[key].(string)
	return s
}

// noisyPNG is a side x side image of pseudo-random pixels (the same for a
// side), which PNG can hardly compress: its decode and the worker's
// processing cost CPU in proportion to its pixels.
func noisyPNG(side int) ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	x := uint32(2463534242)
	for i := 0; i < len(img.Pix); i += 4 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(x), uint8(x>>8), uint8(x>>16), 255
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return b.Bytes(), nil
}

// smallPNG is a 64x64 gradient, a few hundred bytes.
func smallPNG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for y := range 64 {
		for x := range 64 {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 4), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return b.Bytes(), nil
}
