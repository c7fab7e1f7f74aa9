package main

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// TestShutdownEndsStreams: on shutdown the API listener ends its streams
// with operational-disconnect before the server's Shutdown waits, so an
// open stream neither holds the shutdown for the grace period nor is cut
// without the message clients reconnect on.
func TestShutdownEndsStreams(t *testing.T) {
	var mod *streams.Module
	b := apitest.SetupOn(t, 100, func(_ *postgres.DB, d *api.Deps) { mod = d.Modules.Streams })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := &config{ShutdownTimeout: 20 * time.Second, HTTPReadTimeout: 50 * time.Millisecond}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() {
		done <- serveHTTP(ctx, cfg, listener{name: "api", addr: addr, handler: b.API, beforeShutdown: mod.Hub.Stop}, log)
	}()
	var resp *http.Response
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/2/tweets/search/stream", nil)
		req.Header.Set("Authorization", b.Bearer)
		if resp, err = http.DefaultClient.Do(req); err == nil {
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("stream: %v", err)
		}
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	time.Sleep(200 * time.Millisecond) // past the read timeout: the stream stays
	cancel()
	start := time.Now()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.Contains(line, `"disconnect_type":"UpstreamOperationalDisconnect"`) {
		t.Fatalf("stream end %q: %v", line, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("shutdown took %v with a stream open", d)
	}
}
