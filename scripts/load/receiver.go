package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aviary-dev/aviary/domain/webhooks"
)

// receiver is the webhook endpoint of the scaling phase's webhooks family:
// it answers the CRC with the app's consumer secret at once and every
// delivery after a fixed delay (a slow endpoint: the worker's deliverer
// waits on it, no CPU is spent), and counts what it received per
// (webhook, event) to check each arrived once.
type receiver struct {
	secret string
	delay  time.Duration
	ln     net.Listener
	srv    *http.Server

	mu          sync.Mutex
	seen        map[string]int // "<hook>/<event id>" -> receipts
	first, last time.Time
	badSig      int
}

func startReceiver(secret string, delay time.Duration) (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	r := &receiver{secret: secret, delay: delay, ln: ln, seen: map[string]int{}}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) hostPort() string { return r.ln.Addr().String() }

func (r *receiver) url(i int) string { return fmt.Sprintf("http://%s/hook/%d", r.hostPort(), i) }

func (r *receiver) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodGet { // CRC
		token := req.URL.Query().Get("crc_token")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"response_token": webhooks.Sign(r.secret, []byte(token))})
		return
	}
	arrived := time.Now()
	var body strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := req.Body.Read(buf)
		body.Write(buf[:n])
		if err != nil {
			break
		}
	}
	time.Sleep(r.delay)
	key := req.URL.Path + "/" + req.Header.Get("x-aviary-event-id")
	r.mu.Lock()
	if webhooks.Sign(r.secret, []byte(body.String())) != req.Header.Get("x-twitter-webhooks-signature") {
		r.badSig++
	}
	r.seen[key]++
	if r.first.IsZero() || arrived.Before(r.first) {
		r.first = arrived
	}
	r.last = time.Now()
	r.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// reset forgets what was received (between runs, when nothing is in flight).
func (r *receiver) reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = map[string]int{}
	r.first, r.last = time.Time{}, time.Time{}
}

// counts is the number of distinct deliveries received and of receipts
// beyond the first of each (a bad signature counts as a duplicate too, so
// it cannot go unnoticed).
func (r *receiver) counts() (distinct, duplicates int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.seen {
		distinct++
		duplicates += n - 1
	}
	return distinct, duplicates + r.badSig
}

// span is the first arrival to the last answer.
func (r *receiver) span() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last.Sub(r.first)
}
