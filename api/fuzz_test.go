package api_test

import (
	"bytes"
	"encoding/json"
	"github.com/aviary-dev/aviary/api/apitest"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// FuzzRequests sends arbitrary methods, paths, query strings, bodies and
// credential kinds to the real server: bad input must never yield a 5xx,
// and every error must be a well-formed Problem. The seeds run in every
// `go test`; `go test -fuzz FuzzRequests ./api` explores further.
func FuzzRequests(f *testing.F) {
	b := apitest.Setup(f, 1000)
	seeds := []struct {
		method      byte
		path, query string
		body        []byte
		authz       byte
	}{
		{0, "/2/compliance/jobs", "type=tweets", nil, 1},
		{1, "/2/compliance/jobs", "", []byte(`{"type":"users","name":"n"}`), 1},
		{1, "/2/compliance/jobs", "compliance_job.fields=id", []byte(`{"type":"users","resumable":"yes"}`), 1},
		{0, "/2/compliance/jobs/1", "compliance_job.fields=,,", nil, 1},
		{0, "/2/compliance/jobs/99999999999999999999", "", nil, 1},
		{1, "/2/tweets", "", []byte(`{"text":"\u0000\ud800"}`), 2},
		{1, "/2/tweets", "", []byte(`{"text":["a"]}`), 2},
		{2, "/2/tweets/1", "x=%zz", nil, 2},
		{3, "/12/accounts/x", "count=-1", []byte(`[`), 0},
		{0, "/2/compliance/jobs", "type=tweets&type=users&status=", nil, 3},
		{1, "/2/compliance/jobs", "", bytes.Repeat([]byte("["), 10000), 1},
		{1, "/2/media/upload/initialize", "", []byte(`{"media_type":"image/png","total_bytes":1e30}`), 2},
		{1, "/2/media/upload/1/append", "", []byte(`{"media":"!!","segment_index":-1}`), 2},
		{1, "/2/media/upload/1/finalize", "x=1", nil, 2},
		{0, "/2/media/upload", "command=STATUS&media_id=99999999999999999999", nil, 2},
		{0, "/2/tweets/search/recent", "query=%28a%20OR%20-%22b&max_results=10&next_token=zz", nil, 1},
		{0, "/2/tweets/counts/all", "query=from:x%20min_likes:99999999999&granularity=minute&start_time=2006-03-21T00:00:01Z", nil, 1},
		{0, "/2/tweets", "ids=1,2,3&tweet.fields=entities,,&expansions=author_id,referenced_tweets.id", nil, 1},
		{1, "/2/tweets", "", []byte(`{"text":"x","reply":{"in_reply_to_tweet_id":"1"},"edit_options":{"previous_post_id":"2"}}`), 2},
		{1, "/2/users/1/likes", "", []byte(`{"tweet_id":"99999999999999999999"}`), 2},
		{0, "/2/users/by/username/%00", "user.fields=public_metrics", nil, 1},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.query, s.body, s.authz)
	}
	methods := []string{"GET", "POST", "DELETE", "PUT", "PATCH", "HEAD", "OPTIONS"}
	f.Fuzz(func(t *testing.T, method byte, path, query string, body []byte, authz byte) {
		if !strings.HasPrefix(path, "/") || strings.ContainsAny(path, " \r\n#?") {
			return
		}
		target := path
		if query != "" {
			target += "?" + query
		}
		if strings.IndexFunc(target, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
			return // no HTTP client can send it
		}
		if _, err := url.Parse(target); err != nil {
			return // the client cannot build it (Go's server answers such raw requests 400 itself)
		}
		auth := []string{"", b.Bearer, "oauth:reader", "OAuth oauth_consumer_key=\"x\""}[int(authz)%4]
		m := methods[int(method)%len(methods)]
		r := b.Call(t, m, target, auth, "application/json", body)
		if r.Status >= 500 {
			t.Fatalf("%s %s with %q: %d %s", m, target, body, r.Status, r.Raw)
		}
		if r.Status >= 400 && m != "HEAD" && strings.HasPrefix(path, "/2/") {
			var p map[string]any
			if err := json.Unmarshal([]byte(r.Raw), &p); err != nil || p["type"] == nil || p["title"] == nil {
				t.Fatalf("%s %s: error body is not a Problem: %d %q", m, target, r.Status, r.Raw)
			}
			if ct := r.Header.Get("Content-Type"); ct != "application/problem+json" {
				t.Fatalf("%s %s: error content type %q", m, target, ct)
			}
		}
		_ = http.StatusOK
	})
}
