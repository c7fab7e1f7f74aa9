package storagetest

import (
	"bufio"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// echoServer accepts connections and echoes every line back.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// roundTrip sends line on c and reads the echo, waiting at most wait.
func roundTrip(c net.Conn, r *bufio.Reader, line string, wait time.Duration) (string, error) {
	if err := c.SetDeadline(time.Now().Add(wait)); err != nil {
		return "", err
	}
	if _, err := c.Write([]byte(line)); err != nil {
		return "", err
	}
	return r.ReadString('\n')
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestProxyFreeze checks a frozen proxy keeps connections open and accepts
// new ones but relays nothing, and that Thaw delivers what was held.
func TestProxyFreeze(t *testing.T) {
	p := NewProxy(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	if got, err := roundTrip(c, r, "one\n", 5*time.Second); err != nil || got != "one\n" {
		t.Fatalf("before freeze: %q, %v", got, err)
	}
	p.Freeze()
	if got, err := roundTrip(c, r, "two\n", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("frozen, open connection: %q, %v; want a timeout", got, err)
	}
	fresh, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatalf("frozen proxy refused a connection: %v", err)
	}
	defer fresh.Close()
	fr := bufio.NewReader(fresh)
	if got, err := roundTrip(fresh, fr, "three\n", 300*time.Millisecond); !isTimeout(err) {
		t.Fatalf("frozen, new connection: %q, %v; want a timeout", got, err)
	}
	p.Thaw()
	if got, err := roundTrip(c, r, "four\n", 5*time.Second); err != nil || got != "two\n" {
		t.Fatalf("after thaw, open connection: %q, %v; want the held line", got, err)
	}
	if got, err := roundTrip(fresh, fr, "five\n", 5*time.Second); err != nil || got != "three\n" {
		t.Fatalf("after thaw, new connection: %q, %v; want the held line", got, err)
	}
}

// TestPrivateRedis walks a private server through freeze, thaw and stop.
func TestPrivateRedis(t *testing.T) {
	r := PrivateRedis(t)
	client := redis.NewClient(&redis.Options{Addr: r.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer client.Close()
	ping := func(wait time.Duration) error {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		return client.Ping(ctx).Err()
	}
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("running: %v", err)
	}
	r.Freeze()
	if err := ping(300 * time.Millisecond); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("frozen: PING = %v; want a timeout", err)
	}
	r.Thaw()
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("thawed: %v", err)
	}
	if err := client.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatalf("set: %v", err)
	}
	r.Crash()
	if err := ping(5 * time.Second); err == nil || isTimeout(err) {
		t.Fatalf("crashed: PING = %v; want the connection refused", err)
	}
	r.Revive()
	if err := ping(5 * time.Second); err != nil {
		t.Fatalf("revived: %v", err)
	}
	if n, err := client.Exists(context.Background(), "k").Result(); err != nil || n != 0 {
		t.Fatalf("revived: EXISTS k = %d, %v; want an empty server", n, err)
	}
	r.Stop()
	if err := ping(5 * time.Second); err == nil || isTimeout(err) {
		t.Fatalf("stopped: PING = %v; want the connection refused", err)
	}
}
