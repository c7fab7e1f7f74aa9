package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Helpers of the filtered stream tests (docs/streams.md): rules through the
// API, and GET /2/tweets/search/stream held open and read the way a client
// reads it, one JSON message per "\r\n"-terminated line, "\r\n" alone
// being a keep-alive.

// streamMsg is one message of a stream: a matching post (data, includes,
// matching_rules) or an error payload (errors without data).
type streamMsg struct {
	Data          map[string]any   `json:"data"`
	Includes      map[string]any   `json:"includes"`
	MatchingRules []matchingRule   `json:"matching_rules"`
	Errors        []map[string]any `json:"errors"`
	// At is when the line was read off the connection.
	At  time.Time `json:"-"`
	Raw []byte    `json:"-"`
}

type matchingRule struct {
	ID  string `json:"id"`
	Tag string `json:"tag"`
}

// id is the post id of a data message ("" for an error payload).
func (m streamMsg) id() string {
	id, _ := m.Data["id"].(string)
	return id
}

// streamConn is one open GET /2/tweets/search/stream.
type streamConn struct {
	t      testing.TB
	Status int
	Header http.Header
	// Raw is the body of a refused connection (Status != 200).
	Raw    []byte
	msgs   chan streamMsg
	done   chan struct{} // closed once the body has ended
	cancel context.CancelFunc

	mu         sync.Mutex
	keepAlives int
	endErr     error // why the body ended: io.EOF when the server closed it
	// got counts the post ids received (consumer side, see next/waitIDs).
	got map[string]int
	// errorsSeen are the error payloads received (consumer side).
	errorsSeen []streamMsg
}

// openStream connects to base's filtered stream with the app's bearer
// token and query (tweet.fields, expansions, ...). A refused connection is
// returned with its status and body; an accepted one is read in the
// background until the server ends it or the test does.
func openStream(t testing.TB, client *http.Client, base, bearer string, query url.Values) *streamConn {
	t.Helper()
	return openStreamPath(t, client, base, "/2/tweets/search/stream", bearer, query)
}

// openStreamPath is openStream on another streaming endpoint (path):
// GET /2/activity/stream.
func openStreamPath(t testing.TB, client *http.Client, base, path, bearer string, query url.Values) *streamConn {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	u := base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		cancel()
		t.Fatalf("build stream request: %v", err)
	}
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", u, err)
	}
	c := &streamConn{t: t, Status: resp.StatusCode, Header: resp.Header, msgs: make(chan streamMsg, 1024),
		done: make(chan struct{}), cancel: cancel, got: map[string]int{}}
	if resp.StatusCode != http.StatusOK {
		c.Raw, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		close(c.done)
		close(c.msgs)
		return c
	}
	t.Cleanup(c.close)
	go c.read(resp.Body)
	return c
}

// crlfLines splits a stream body at "\r\n" (the platform's framing); an
// empty token is a keep-alive.
func crlfLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.Index(data, []byte("\r\n")); i >= 0 {
		return i + 2, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

func (c *streamConn) read(body io.ReadCloser) {
	defer close(c.done)
	defer close(c.msgs)
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	sc.Split(crlfLines)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			c.mu.Lock()
			c.keepAlives++
			c.mu.Unlock()
			continue
		}
		m := streamMsg{At: time.Now(), Raw: bytes.Clone(line)}
		if err := json.Unmarshal(line, &m); err != nil {
			c.setEnd(fmt.Errorf("undecodable stream line %q: %w", line, err))
			return
		}
		c.msgs <- m
	}
	err := sc.Err()
	if err == nil {
		err = io.EOF
	}
	c.setEnd(err)
}

func (c *streamConn) setEnd(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.endErr == nil {
		c.endErr = err
	}
}

// close ends the connection from the client's side and waits for the
// reader.
func (c *streamConn) close() {
	c.cancel()
	<-c.done
}

// keepAliveCount is how many "\r\n" keep-alives arrived so far.
func (c *streamConn) keepAliveCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.keepAlives
}

// next returns the next message within timeout; ok is false when none came
// or the stream ended.
func (c *streamConn) next(timeout time.Duration) (streamMsg, bool) {
	select {
	case m, open := <-c.msgs:
		if !open {
			return streamMsg{}, false
		}
		if id := m.id(); id != "" {
			c.got[id]++
		} else {
			c.errorsSeen = append(c.errorsSeen, m)
		}
		return m, true
	case <-time.After(timeout):
		return streamMsg{}, false
	}
}

// waitPost reads until the post id arrives and returns its message; it
// fails the test after timeout or when the stream ends first.
func (c *streamConn) waitPost(id string, timeout time.Duration) streamMsg {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		m, ok := c.next(time.Until(deadline))
		if !ok {
			c.t.Fatalf("post %s not received on the stream within %v (ended: %v; received %v)", id, timeout, c.ended(), c.got)
		}
		if m.id() == id {
			return m
		}
	}
}

// waitIDs reads until every id arrived at least once, or timeout; it
// returns the ids still missing.
func (c *streamConn) waitIDs(ids []string, timeout time.Duration) (missing []string) {
	deadline := time.Now().Add(timeout)
	for {
		missing = missing[:0]
		for _, id := range ids {
			if c.got[id] == 0 {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if _, ok := c.next(time.Until(deadline)); !ok {
			return missing
		}
	}
}

// waitEnd waits until the server ends the stream, reading what comes
// before, and returns the error payloads received.
func (c *streamConn) waitEnd(timeout time.Duration) []streamMsg {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-c.done: // msgs is closed too: read what is left of it
			for {
				if _, ok := c.next(time.Minute); !ok {
					return c.errorsSeen
				}
			}
		default:
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("stream still open %v later (received %v)", timeout, c.got)
		}
		c.next(50 * time.Millisecond)
	}
}

// ended is the error the body ended with (nil while it is open).
func (c *streamConn) ended() error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.endErr
	default:
		return nil
	}
}

// ruleSpec is a rule to add: value and tag.
type ruleSpec struct {
	Value string `json:"value"`
	Tag   string `json:"tag,omitempty"`
}

// addRules adds rules through POST /2/tweets/search/stream/rules at base
// with the app's bearer token and returns their ids by value.
func (s *stack) addRules(base, bearer string, rules ...ruleSpec) map[string]string {
	s.t.Helper()
	req := s.newRequest(http.MethodPost, "/2/tweets/search/stream/rules", map[string]any{"add": rules})
	req.URL, _ = url.Parse(base + "/2/tweets/search/stream/rules")
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp := s.send(req)
	if resp.Status != http.StatusCreated && resp.Status != http.StatusOK {
		s.t.Fatalf("add %d rules: %d %s", len(rules), resp.Status, resp.Raw)
	}
	data, _ := resp.Body["data"].([]any)
	out := map[string]string{}
	for _, d := range data {
		r, _ := d.(map[string]any)
		v, _ := r["value"].(string)
		id, _ := r["id"].(string)
		out[v] = id
	}
	if len(out) != len(rules) {
		s.t.Fatalf("add %d rules: %d created: %s", len(rules), len(out), resp.Raw)
	}
	return out
}

// bearerAt sends an app-only request to base (a replica's base URL).
func (s *stack) bearerAt(base, method, path string, body any) response {
	s.t.Helper()
	req := s.newRequest(method, path, body)
	req.URL, _ = url.Parse(base + path)
	req.Header.Set("Authorization", s.bearer())
	return s.send(req)
}

// postAt creates a post through the replica at base as tok and returns its
// id in decimal; status is the answer's when it is not 201 (id "").
func (s *stack) postAt(tok userToken, base, text string) (id string, status int) {
	s.t.Helper()
	resp := s.signedJSONAt(tok, base, http.MethodPost, "/2/tweets", map[string]any{"text": text})
	if resp.Status != http.StatusCreated {
		return "", resp.Status
	}
	data, _ := resp.Body["data"].(map[string]any)
	id, _ = data["id"].(string)
	return id, resp.Status
}

// mustPostAt is postAt that fails the test unless the post was created.
func (s *stack) mustPostAt(tok userToken, base, text string) string {
	s.t.Helper()
	id, status := s.postAt(tok, base, text)
	if id == "" {
		s.t.Fatalf("create post %q at %s: %d", text, base, status)
	}
	return id
}

// connectionList is GET /2/connections at base (status: active, inactive
// or all; "" for the default).
func (s *stack) connectionList(base, status string) []map[string]any {
	s.t.Helper()
	path := "/2/connections?connection.fields=id,client_ip,connected_at,disconnected_at,disconnect_reason,endpoint_name&max_results=100"
	if status != "" {
		path += "&status=" + status
	}
	resp := s.bearerAt(base, http.MethodGet, path, nil)
	if resp.Status != http.StatusOK {
		s.t.Fatalf("GET /2/connections at %s: %d %s", base, resp.Status, resp.Raw)
	}
	var out []map[string]any
	data, _ := resp.Body["data"].([]any)
	for _, d := range data {
		out = append(out, d.(map[string]any))
	}
	return out
}

// waitConnections polls GET /2/connections at base until n connections of
// status are listed and returns them.
func (s *stack) waitConnections(base, status string, n int, timeout time.Duration) []map[string]any {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		list := s.connectionList(base, status)
		if len(list) == n {
			return list
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("GET /2/connections?status=%s at %s lists %d connections after %v, want %d: %v", status, base, len(list), timeout, n, list)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// connectionIDs are the ids of a GET /2/connections list.
func connectionIDs(list []map[string]any) []string {
	var ids []string
	for _, c := range list {
		id, _ := c["id"].(string)
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// wantDisconnectPayload checks that a stream ended with the platform's
// disconnect error payload (errors with a problem type and a title).
func wantDisconnectPayload(t testing.TB, what string, errs []streamMsg) {
	t.Helper()
	for _, m := range errs {
		for _, e := range m.Errors {
			typ, _ := e["type"].(string)
			if strings.Contains(typ, "/problems/") && e["title"] != nil {
				return
			}
		}
	}
	t.Errorf("%s: no disconnect error payload before the stream ended (got %d error messages: %v)", what, len(errs), errs)
}
