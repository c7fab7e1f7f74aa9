package e2e

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostileStreamShutdown: in one "aviary dev" process, a post made
// through the API reaches an open filtered stream within a second (log ->
// dispatcher -> Redis -> hub); SIGTERM then ends the stream with the
// platform's operational-disconnect body well before the shutdown grace
// period, and the process exits cleanly.
func TestHostileStreamShutdown(t *testing.T) {
	s := newStack(t, stackOptions{dev: true, driver: "local"})
	r := s.do("POST", "/2/tweets/search/stream/rules", s.bearer(), map[string]any{"add": []map[string]any{{"value": "hostilekeyword", "tag": "h"}}})
	if r.Status != 201 { // created (docs/streams-rules.md)
		t.Fatalf("add rule: %d %s", r.Status, r.Raw)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.baseURL+"/2/tweets/search/stream", nil)
	req.Header.Set("Authorization", s.bearer())
	resp, err := s.client.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("open stream: %v", err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		br := bufio.NewReader(resp.Body)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if l = strings.TrimSpace(l); l != "" {
				lines <- l
			}
		}
	}()
	time.Sleep(500 * time.Millisecond)
	tok := userToken{s.creds.AccessToken, s.creds.AccessTokenSecret}
	start := time.Now()
	s.post(tok, "a hostilekeyword post")
	select {
	case l := <-lines:
		if !strings.Contains(l, "hostilekeyword") || !strings.Contains(l, `"matching_rules"`) {
			t.Fatalf("line %s", l)
		}
		t.Logf("delivered in %v", time.Since(start))
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("delivery took %v", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no post on the stream")
	}
	s.mu.Lock()
	dev := s.procs[0]
	s.mu.Unlock()
	stop := time.Now()
	_ = dev.Process.Signal(syscall.SIGTERM)
	select {
	case l, ok := <-lines:
		if !ok || !strings.Contains(l, "operational-disconnect") {
			t.Fatalf("after SIGTERM: %v %s", ok, l)
		}
		t.Logf("operational-disconnect %v after SIGTERM", time.Since(stop))
	case <-time.After(4 * time.Second):
		t.Fatal("no operational-disconnect within 4s of SIGTERM (AVIARY_SHUTDOWN_TIMEOUT=5s)")
	}
	if _, ok := <-lines; ok {
		t.Error("the stream went on after the disconnect body")
	}
}
