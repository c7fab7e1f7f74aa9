package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/apitest"
)

// TestShutdownPastSilentConnections: a connection that never sent a
// request (a client's spare, dialled ahead) does not make a shutdown fail:
// http.Server.Shutdown counts it idle only after 5 s, longer than this
// grace, and serveHTTP then closes it and returns nil. A request still
// running at the end of the grace is an error naming it.
func TestShutdownPastSilentConnections(t *testing.T) {
	t.Parallel()
	b := apitest.Setup(t, 100)
	cases := []struct {
		name    string
		running bool // a request whose body never ends
		wantErr string
	}{
		{name: "a silent connection", wantErr: ""},
		{name: "a running request", running: true, wantErr: "1 requests still running"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			addr := ln.Addr().String()
			ln.Close()
			cfg := &config{ShutdownTimeout: 500 * time.Millisecond, HTTPReadTimeout: time.Minute}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			active := make(chan struct{}, 4)
			l := listener{name: "api", addr: addr, handler: b.API, connState: func(_ net.Conn, st http.ConnState) {
				if st == http.StateActive {
					active <- struct{}{}
				}
			}}
			go func() {
				done <- serveHTTP(ctx, cfg, l, slog.New(slog.NewTextHandler(io.Discard, nil)))
			}()
			var conn net.Conn
			for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
				if conn, err = net.Dial("tcp", addr); err == nil {
					break
				}
				if time.Since(start) > 5*time.Second {
					t.Fatalf("dial: %v", err)
				}
			}
			defer conn.Close()
			if tc.running {
				// Headers and part of a declared body: the handler waits for the rest.
				req := "POST /2/tweets HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: " + b.Bearer +
					"\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"text\":"
				if _, err := conn.Write([]byte(req)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.running {
				// The server has read it: the request is running, not
				// still waiting in the socket when the shutdown begins.
				select {
				case <-active:
				case <-time.After(10 * time.Second):
					t.Fatal("the request never became active")
				}
			} else if resp, err := http.Get("http://" + addr + "/healthz"); err != nil {
				// The server accepted it (a request to another connection answers).
				t.Fatal(err)
			} else {
				resp.Body.Close()
			}
			cancel()
			err = <-done
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("serve: %v, want nil", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("serve: %v, want %q", err, tc.wantErr)
			}
		})
	}
}
