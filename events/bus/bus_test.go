package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestControlsStayInTheirDatabase: pub/sub channels are server-wide in
// Redis, so two deployments on one server with the same prefix but other
// database numbers must not receive each other's controls; a bus on the
// same database does.
func TestControlsStayInTheirDatabase(t *testing.T) {
	prefix := "aviary-test:" + storagetest.RandomSuffix(8) + ":"
	client := func(db int) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: storagetest.RedisAddr(), DB: db})
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := bus.New(client(3), prefix)
	same := bus.New(client(3), prefix).Controls(ctx)
	other := bus.New(client(4), prefix).Controls(ctx)
	time.Sleep(300 * time.Millisecond) // subscribed
	if err := pub.PublishControl(ctx, bus.Control{Kind: bus.Terminate, AppID: 7}); err != nil {
		t.Fatalf("publish: %v", err)
	}
	select {
	case c := <-same:
		if c.AppID != 7 {
			t.Errorf("same database: %+v", c)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("same database: no control")
	}
	select {
	case c := <-other:
		t.Fatalf("another database received %+v", c)
	case <-time.After(300 * time.Millisecond):
	}
}
