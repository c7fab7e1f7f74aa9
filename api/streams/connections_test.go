package streams_test

import (
	"context"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/storage"
)

const streamPath = "/2/tweets/search/stream"

// TestConnectionLimit: the app's second stream gets the platform's
// TooManyConnections 429; the first client's close frees its slot at
// once; another app has its own limit.
func TestConnectionLimit(t *testing.T) {
	b := setupStreams(t, options{})
	first := open(t, b.Srv.URL, streamPath, b.Bearer)
	if first.Resp.StatusCode != 200 {
		t.Fatalf("first: %d", first.Resp.StatusCode)
	}
	r := b.Call(t, "GET", streamPath, b.Bearer, "", nil)
	want := `{"connection_issue":"TooManyConnections","detail":"This stream is currently at the maximum allowed connection limit.",` +
		`"status":429,"title":"ConnectionException","type":"https://api.x.com/2/problems/streaming-connection"}`
	if r.Status != 429 || apitest.CanonicalJSON(t, r.Raw) != want {
		t.Fatalf("second: %d %s", r.Status, r.Raw)
	}
	if other := open(t, b.Srv.URL, streamPath, b.OtherBearer); other.Resp.StatusCode != 200 {
		t.Fatalf("other app: %d", other.Resp.StatusCode)
	}
	first.Close()
	start := time.Now()
	for {
		again := open(t, b.Srv.URL, streamPath, b.Bearer)
		if again.Resp.StatusCode == 200 {
			break
		}
		again.Close()
		if time.Since(start) > time.Second {
			t.Fatalf("slot not freed within 1s of the close: %d", again.Resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}
	hist := b.Get(t, "/2/connections?status=inactive", b.Bearer)
	if apitest.Obj(hist.Body, "data", "0", "disconnect_reason") != storage.DisconnectClient {
		t.Errorf("history %s", hist.Raw)
	}
}

// TestConnectionLimitConfigured: AVIARY_STREAM_CONNECTIONS=2 admits two.
func TestConnectionLimitConfigured(t *testing.T) {
	b := setupStreams(t, options{connections: 2})
	for i, want := range []int{200, 200, 429} {
		if s := open(t, b.Srv.URL, streamPath, b.Bearer); s.Resp.StatusCode != want {
			t.Fatalf("stream %d: %d, want %d", i, s.Resp.StatusCode, want)
		}
	}
}

// TestTerminate: each DELETE ends the stream on the replica holding it,
// whichever replica receives the DELETE: this one, another one (its control
// over pub/sub), or none (the record alone, found by the holder's poll).
func TestTerminate(t *testing.T) {
	b := setupStreams(t, options{})
	replica, _ := b.replica(t, "replica-b")
	kill := func(base string) func(t *testing.T, id string) apitest.Reply {
		return func(t *testing.T, id string) apitest.Reply {
			return call(t, base, "DELETE", "/2/connections/all", b.Bearer, "")
		}
	}
	tests := []struct {
		name string
		kill func(t *testing.T, id string) apitest.Reply
	}{
		{"all, same replica", kill(b.Srv.URL)},
		{"all, other replica", kill(replica.URL)},
		{"by endpoint, other replica", func(t *testing.T, id string) apitest.Reply {
			return call(t, replica.URL, "DELETE", "/2/connections/filtered_stream", b.Bearer, "")
		}},
		{"by uuid, other replica", func(t *testing.T, id string) apitest.Reply {
			return call(t, replica.URL, "DELETE", "/2/connections", b.Bearer, `{"uuids":["`+id+`","00000000-0000-0000-0000-000000000000"]}`)
		}},
		{"record only: the holder's poll", func(t *testing.T, id string) apitest.Reply {
			ids, err := b.DB.RequestStreamTermination(context.Background(), storage.ConnectionTermination{AppID: b.App.ID, IDs: []string{id}})
			if err != nil || len(ids) != 1 {
				t.Fatalf("request termination: %v %v", ids, err)
			}
			return apitest.Reply{Status: 200, Body: map[string]any{"data": map[string]any{"successful_kills": 1.0}}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t, b.Srv.URL, streamPath, b.Bearer)
			if s.Resp.StatusCode != 200 {
				t.Fatalf("open: %d", s.Resp.StatusCode)
			}
			list := call(t, replica.URL, "GET", "/2/connections", b.Bearer, "")
			id, _ := apitest.Obj(list.Body, "data", "0", "id").(string)
			if list.Status != 200 || id == "" || apitest.Obj(list.Body, "meta", "result_count") != 1.0 ||
				apitest.Obj(list.Body, "data", "0", "endpoint_name") != "filtered_stream" {
				t.Fatalf("list: %d %s", list.Status, list.Raw)
			}
			r := tt.kill(t, id)
			if r.Status != 200 || apitest.Obj(r.Body, "data", "successful_kills") != 1.0 {
				t.Fatalf("kill: %d %s", r.Status, r.Raw)
			}
			line, ok := s.next(t, 3*time.Second)
			want := `{"errors":[{"detail":"This stream was terminated through the connections endpoints.","disconnect_type":"ForceDisconnect",` +
				`"title":"operational-disconnect","type":"https://api.x.com/2/problems/operational-disconnect"}]}`
			if !ok || apitest.CanonicalJSON(t, line) != want {
				t.Fatalf("stream end %q (%v)", line, ok)
			}
			if !s.ended(time.Second) {
				t.Fatal("the stream stayed open after its disconnect message")
			}
			waitInactive(t, b, id, storage.DisconnectTerminated)
		})
	}
}

// TestTerminateByControl: with heartbeats far apart, a DELETE on another
// replica ends the stream at once through the pub/sub control alone.
func TestTerminateByControl(t *testing.T) {
	b := setupStreams(t, options{poll: time.Hour})
	replica, _ := b.replica(t, "replica-b")
	s := open(t, b.Srv.URL, streamPath, b.Bearer)
	time.Sleep(300 * time.Millisecond) // both hubs subscribed
	start := time.Now()
	if r := call(t, replica.URL, "DELETE", "/2/connections/all", b.Bearer, ""); r.Status != 200 || apitest.Obj(r.Body, "data", "successful_kills") != 1.0 {
		t.Fatalf("kill: %d %s", r.Status, r.Raw)
	}
	if !s.ended(2 * time.Second) {
		t.Fatal("the control did not end the stream")
	}
	t.Logf("ended %v after the DELETE", time.Since(start))
}

// waitInactive waits for connection id to be listed inactive for reason.
func waitInactive(t *testing.T, b *bundle, id, reason string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		r := b.Get(t, "/2/connections?status=all&max_results=100", b.Bearer)
		for _, c := range r.Body["data"].([]any) {
			c := c.(map[string]any)
			if c["id"] == id && c["disconnect_reason"] == reason && c["disconnected_at"] != nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("connection %s not closed for %s: %s", id, reason, r.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKillAnswers: the DELETE answers count and list what they ended;
// UUIDs that are not open connections of the app fail; bad input is 400.
func TestKillAnswers(t *testing.T) {
	b := setupStreams(t, options{})
	s := open(t, b.Srv.URL, streamPath, b.Bearer)
	id := apitest.Obj(b.Get(t, "/2/connections", b.Bearer).Body, "data", "0", "id").(string)
	for _, tt := range []struct {
		name, method, path, authz, body string
		status                          int
		want                            string
	}{
		{"another app's uuid", "DELETE", "/2/connections", b.OtherBearer, `{"uuids":["` + id + `"]}`, 200,
			`{"data":{"failed_kills":1,"results":[{"error_message":"No active connection with this UUID.","success":false,"uuid":"` + id + `"}],"successful_kills":0}}`},
		{"none open", "DELETE", "/2/connections/all", b.OtherBearer, "", 200, `{"data":{"failed_kills":0,"results":[],"successful_kills":0}}`},
		{"unknown endpoint", "DELETE", "/2/connections/nope", b.Bearer, "", 400, ""},
		{"no uuids", "DELETE", "/2/connections", b.Bearer, `{"uuids":[]}`, 400, ""},
		{"user context", "DELETE", "/2/connections/all", "oauth:reader", "", 403, ""},
		{"by uuid", "DELETE", "/2/connections", b.Bearer, `{"uuids":["` + id + `"]}`, 200,
			`{"data":{"failed_kills":0,"results":[{"success":true,"uuid":"` + id + `"}],"successful_kills":1}}`},
	} {
		r := b.Call(t, tt.method, tt.path, tt.authz, "application/json", []byte(tt.body))
		if r.Status != tt.status || (tt.want != "" && apitest.CanonicalJSON(t, r.Raw) != tt.want) {
			t.Errorf("%s: %d %s", tt.name, r.Status, r.Raw)
		}
	}
	if !s.ended(3 * time.Second) {
		t.Error("the stream killed by uuid stayed open")
	}
}

// TestListConnections: status, fields and pagination.
func TestListConnections(t *testing.T) {
	b := setupStreams(t, options{connections: 5})
	for range 3 {
		open(t, b.Srv.URL, streamPath, b.Bearer).Close()
	}
	open(t, b.Srv.URL, streamPath, b.Bearer)
	time.Sleep(200 * time.Millisecond) // the closes land
	active := b.Get(t, "/2/connections", b.Bearer)
	if apitest.Obj(active.Body, "meta", "result_count") != 1.0 || apitest.Obj(active.Body, "data", "0", "disconnected_at") != nil ||
		apitest.Obj(active.Body, "data", "0", "client_ip") != "127.0.0.1" {
		t.Errorf("active: %s", active.Raw)
	}
	seen := map[any]bool{}
	path := "/2/connections?status=all&max_results=2&connection.fields=id,connected_at"
	for page := 0; ; page++ {
		r := b.Get(t, path, b.Bearer)
		for _, c := range r.Body["data"].([]any) {
			c := c.(map[string]any)
			if len(c) != 2 || c["connected_at"] == nil {
				t.Errorf("fields: %v", c)
			}
			seen[c["id"]] = true
		}
		next, _ := apitest.Obj(r.Body, "meta", "next_token").(string)
		if next == "" {
			break
		}
		path = "/2/connections?status=all&max_results=2&connection.fields=id,connected_at&pagination_token=" + next
		if page > 3 {
			t.Fatal("pagination does not end")
		}
	}
	if len(seen) != 4 {
		t.Errorf("paged through %d connections, want 4", len(seen))
	}
	inactive := b.Get(t, "/2/connections?status=inactive&endpoints=filtered_stream,sample_stream", b.Bearer)
	if apitest.Obj(inactive.Body, "meta", "result_count") != 3.0 {
		t.Errorf("inactive: %s", inactive.Raw)
	}
	if r := b.Call(t, "GET", "/2/connections?status=open", b.Bearer, "", nil); r.Status != 400 {
		t.Errorf("bad status: %d", r.Status)
	}
}

// TestKillPublishesMarkedIDs: every DELETE's control names the connections
// it marked, never only the request's criteria, so a stream opened between
// the marking and the message (on any replica) is not ended by it.
func TestKillPublishesMarkedIDs(t *testing.T) {
	b := setupStreams(t, options{poll: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	controls := b.Bus.Controls(ctx)
	time.Sleep(300 * time.Millisecond) // subscribed
	for _, path := range []string{"/2/connections/all", "/2/connections/filtered_stream"} {
		s := open(t, b.Srv.URL, streamPath, b.Bearer)
		if s.Resp.StatusCode != 200 {
			t.Fatalf("open: %d", s.Resp.StatusCode)
		}
		id := apitest.Obj(b.Get(t, "/2/connections", b.Bearer).Body, "data", "0", "id").(string)
		if r := b.Call(t, "DELETE", path, b.Bearer, "", nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Raw)
		}
		select {
		case c := <-controls:
			if len(c.ConnectionIDs) != 1 || c.ConnectionIDs[0] != id || c.AppID != b.App.ID {
				t.Errorf("%s: control %+v, want the marked id %s", path, c, id)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: no control published", path)
		}
		if !s.ended(3 * time.Second) {
			t.Fatalf("%s: the stream stayed open", path)
		}
	}
}

// TestLapsedRecordEndsOperational: when another replica closed this one's
// record because its heartbeats lapsed (a stall, a partition), the stream
// ends with the operational-disconnect body, so the client reconnects; it
// was not terminated through the connections endpoints.
func TestLapsedRecordEndsOperational(t *testing.T) {
	b := setupStreams(t, options{})
	s := open(t, b.Srv.URL, streamPath, b.Bearer)
	if s.Resp.StatusCode != 200 {
		t.Fatalf("open: %d", s.Resp.StatusCode)
	}
	id := apitest.Obj(b.Get(t, "/2/connections", b.Bearer).Body, "data", "0", "id").(string)
	if err := b.DB.CloseStreamConnection(context.Background(), id, storage.DisconnectHeartbeat); err != nil {
		t.Fatal(err)
	}
	line, ok := s.next(t, 3*time.Second)
	want := `{"errors":[{"detail":"This stream has been disconnected upstream for operational reasons.","disconnect_type":"UpstreamOperationalDisconnect",` +
		`"title":"operational-disconnect","type":"https://api.x.com/2/problems/operational-disconnect"}]}`
	if !ok || apitest.CanonicalJSON(t, line) != want {
		t.Fatalf("stream end %q (%v)", line, ok)
	}
	if !s.ended(time.Second) {
		t.Fatal("the stream stayed open after its disconnect message")
	}
	waitInactive(t, b, id, storage.DisconnectHeartbeat)
}
