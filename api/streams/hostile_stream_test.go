package streams_test

import (
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const hStreamPath = "/2/tweets/search/stream"

// TestHostileRacingOpens: 20 opens at once with a limit of 1 admit exactly one.
func TestHostileRacingOpens(t *testing.T) {
	b := setupStreams(t, options{})
	var wg sync.WaitGroup
	codes := make(chan int, 20)
	var mu sync.Mutex
	var keep []*streamClient
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := open(t, b.Srv.URL, hStreamPath, b.Bearer)
			codes <- s.Resp.StatusCode
			mu.Lock()
			keep = append(keep, s)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(codes)
	ok := 0
	for c := range codes {
		if c == 200 {
			ok++
		} else if c != 429 {
			t.Errorf("status %d", c)
		}
	}
	if ok != 1 {
		t.Errorf("%d streams admitted with a limit of 1", ok)
	}
}

// TestHostileGoroutines: 200 streams opened and closed leave no goroutine behind.
func TestHostileGoroutines(t *testing.T) {
	b := setupStreams(t, options{connections: 1000})
	time.Sleep(500 * time.Millisecond)
	http.DefaultClient.CloseIdleConnections()
	base := runtime.NumGoroutine()
	var list []*streamClient
	for range 200 {
		s := open(t, b.Srv.URL, hStreamPath, b.Bearer)
		if s.Resp.StatusCode != 200 {
			t.Fatalf("open: %d", s.Resp.StatusCode)
		}
		list = append(list, s)
	}
	for _, s := range list {
		s.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	var n int
	for time.Now().Before(deadline) {
		http.DefaultClient.CloseIdleConnections()
		n = runtime.NumGoroutine()
		if n <= base+5 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n > base+5 {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Errorf("goroutines: %d before, %d after 200 streams closed\n%s", base, n, buf[:min(len(buf), 8000)])
	}
	r := b.Get(t, "/2/connections", b.Bearer)
	if r.Status != 200 || r.Body["data"] != nil {
		t.Errorf("active connections after close: %s", r.Raw)
	}
}

// TestHostileKillTenancy: another app's UUIDs can not be killed; the
// answer names no other app.
func TestHostileKillTenancy(t *testing.T) {
	b := setupStreams(t, options{})
	s := open(t, b.Srv.URL, hStreamPath, b.Bearer)
	r := b.Get(t, "/2/connections", b.Bearer)
	id := r.Body["data"].([]any)[0].(map[string]any)["id"].(string)
	for _, body := range []string{`{"uuids":["` + id + `"]}`, `{"uuids":["` + strings.ToUpper(id) + `"]}`} {
		r = call(t, b.Srv.URL, "DELETE", "/2/connections", b.OtherBearer, body)
		t.Logf("other kill %s -> %d %s", body, r.Status, r.Raw)
		if r.Status != 200 || strings.Contains(r.Raw, `"success":true`) {
			t.Errorf("other app's kill: %d %s", r.Status, r.Raw)
		}
	}
	for _, p := range []string{"/2/connections/all", "/2/connections/filtered_stream"} {
		r = call(t, b.Srv.URL, "DELETE", p, b.OtherBearer, "")
		t.Logf("other %s -> %d %s", p, r.Status, r.Raw)
	}
	r = b.Get(t, "/2/connections?status=all", b.OtherBearer)
	if strings.Contains(r.Raw, id) {
		t.Errorf("other app lists it: %s", r.Raw)
	}
	r = b.Get(t, "/2/connections?status=all&pagination_token="+id, b.OtherBearer)
	t.Logf("other app with this app's token -> %d %s", r.Status, r.Raw)
	if s.ended(500 * time.Millisecond) {
		t.Fatal("the stream ended by another app's call")
	}
	// The owner with an upper-case UUID.
	r = call(t, b.Srv.URL, "DELETE", "/2/connections", b.Bearer, `{"uuids":["`+strings.ToUpper(id)+`"]}`)
	t.Logf("owner upper-case kill -> %d %s", r.Status, r.Raw)
	for _, body := range []string{`{"uuids":[]}`, `{"uuids":["x"]}`, `{"uuids":["` + id + `","` + id + `"]}`, `{}`, `{"uuids":["a"],"extra":1}`} {
		r = call(t, b.Srv.URL, "DELETE", "/2/connections", b.Bearer, body)
		t.Logf("kill %s -> %d %s", body, r.Status, r.Raw)
		if r.Status >= 500 {
			t.Errorf("kill %s: %d", body, r.Status)
		}
	}
	for _, q := range []string{"pagination_token=zz", "status=nope", "endpoints=x", "max_results=101", "connection.fields=nope"} {
		r = call(t, b.Srv.URL, "GET", "/2/connections?"+q, b.Bearer, "")
		t.Logf("GET %s -> %d %s", q, r.Status, r.Raw)
		if r.Status >= 500 {
			t.Errorf("GET %s: %d", q, r.Status)
		}
	}
}

// TestHostileBurst: a reading client is sent a burst of 100 matching
// posts at once (a worker back after a restart dispatches its backlog in
// one batch; the hub's catch-up routes up to 500 at once): it gets them
// all and is not dropped as too slow.
func TestHostileBurst(t *testing.T) {
	b := setupStreams(t, options{})
	b.rule(t, b.App.ID, "burst", "")
	s := open(t, b.Srv.URL, hStreamPath, b.Bearer)
	if s.Resp.StatusCode != 200 {
		t.Fatalf("open: %d", s.Resp.StatusCode)
	}
	var ids []int64
	for i := range 100 {
		_, id := b.post(t, fmt.Sprintf("burst %d", i))
		ids = append(ids, id)
	}
	b.dispatch(t, ids...)
	for i := range 100 {
		line, ok := s.next(t, 10*time.Second)
		if !ok || strings.Contains(line, "errors") {
			t.Fatalf("post %d of the burst: %v %s", i, ok, line)
		}
	}
}

// TestHostileKillUpperCaseUUID: UUIDs are case-insensitive (RFC 9562); a
// kill naming the connection in upper case ends it.
func TestHostileKillUpperCaseUUID(t *testing.T) {
	b := setupStreams(t, options{})
	s := open(t, b.Srv.URL, hStreamPath, b.Bearer)
	r := b.Get(t, "/2/connections", b.Bearer)
	id := r.Body["data"].([]any)[0].(map[string]any)["id"].(string)
	upper := strings.ToUpper(id)
	r = call(t, b.Srv.URL, "DELETE", "/2/connections", b.Bearer, `{"uuids":["`+upper+`"]}`)
	if r.Status != 200 || !strings.Contains(r.Raw, `"successful_kills":1`) || !strings.Contains(r.Raw, `"failed_kills":0`) {
		t.Fatalf("kill by upper-case UUID: %d %s", r.Status, r.Raw)
	}
	if !s.ended(5 * time.Second) {
		t.Error("the stream did not end")
	}
}

// TestHostileHiddenPosts: a post deleted between its match and its
// delivery, and a post of an author who turned protected, are not sent;
// the next visible post is.
func TestHostileHiddenPosts(t *testing.T) {
	b := setupStreams(t, options{})
	b.rule(t, b.App.ID, "hidden", "")
	s := open(t, b.Srv.URL, hStreamPath, b.Bearer)
	gone, goneID := b.post(t, "hidden one")
	r := b.Call(t, "DELETE", "/2/tweets/"+gone, "oauth:author", "", nil)
	if r.Status != 200 {
		t.Fatalf("delete: %d %s", r.Status, r.Raw)
	}
	_, protID := b.post(t, "hidden two")
	b.Query(t, "UPDATE users SET protected_at = now() WHERE id = "+strconv.FormatInt(b.Author.ID, 10)+" RETURNING 1", new(int))
	b.dispatch(t, goneID, protID)
	// The author stays protected: the hub renders asynchronously, so the
	// visible post is another user's (unprotecting would race the render).
	visible := b.Create(t, "oauth:reader", map[string]any{"text": "hidden three"})
	visID, _ := strconv.ParseInt(visible, 10, 64)
	b.dispatch(t, visID)
	line, ok := s.next(t, 5*time.Second)
	if !ok || !strings.Contains(line, `"id":"`+visible+`"`) {
		t.Fatalf("first line %v %s, want post %s only", ok, line, visible)
	}
}

// TestHostileConnectionsToken: a pagination_token that is not a token the
// endpoint gave out (a connection UUID) is a 400, as on the rules list.
func TestHostileConnectionsToken(t *testing.T) {
	b := setupStreams(t, options{})
	for _, tok := range []string{"zz", "1", "' OR 1=1 --", "00000000-0000-0000-0000-00000000000g"} {
		r := call(t, b.Srv.URL, "GET", "/2/connections?status=all&pagination_token="+url.QueryEscape(tok), b.Bearer, "")
		if r.Status != 400 {
			t.Errorf("pagination_token %q: %d %s", tok, r.Status, r.Raw)
		}
	}
	r := call(t, b.Srv.URL, "GET", "/2/connections?status=all&pagination_token=6F9619FF-8B86-D011-B42D-00CF4FC964FF", b.Bearer, "")
	if r.Status != 200 {
		t.Errorf("a well-formed token: %d %s", r.Status, r.Raw)
	}
}
