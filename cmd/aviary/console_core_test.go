package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/streams"
	"github.com/aviary-dev/aviary/events/bus"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/blob/local"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestConsoleEndStreamsAcrossReplicas: the console's Kill, served by one
// replica, ends a stream another replica holds, through the Redis bus
// (the heartbeat poll, which would also find the mark, is set far off).
func TestConsoleEndStreamsAcrossReplicas(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	rc, prefix := storagetest.RedisPrefix(t)
	ctx := t.Context()
	hub := func(replica string) *streams.Hub {
		h := streams.NewHub(streams.HubDeps{Bus: bus.New(rc, prefix), Conns: db, Replica: replica,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Poll: time.Hour, Block: 100 * time.Millisecond})
		if err := h.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			h.Stop(stop)
		})
		return h
	}
	console, holder := hub("replica-a"), hub("replica-b")
	app := factory.App(t, db, nil)
	rec, err := db.OpenStreamConnection(ctx, storage.StreamConnection{AppID: app.ID, Endpoint: storage.EndpointFilteredStream, Replica: "replica-b"}, 5)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := holder.Register(rec)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unregister(conn)
	other, err := holder.Register(storage.StreamConnection{ID: "00000000-0000-4000-8000-000000000001", AppID: app.ID, Endpoint: storage.EndpointFilteredStream})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unregister(other)
	if _, err := db.RequestStreamTermination(ctx, storage.ConnectionTermination{AppID: app.ID, IDs: []string{rec.ID}}); err != nil {
		t.Fatal(err)
	}
	end := consoleEndStreams(console)
	// The subscriptions start with the hubs: announce until one hears it.
	deadline := time.After(5 * time.Second)
	for done := false; !done; {
		if err := end(ctx, app.ID, []string{rec.ID}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-conn.Ended():
			done = true
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("the stream on the other replica did not end")
		}
	}
	if conn.Reason() != storage.DisconnectTerminated || other.Reason() != "" {
		t.Errorf("reasons: killed %q, other %q", conn.Reason(), other.Reason())
	}
	if consoleEndStreams(nil) != nil {
		t.Error("no hub: want no announcer")
	}
}

// TestConsoleOpenBlob: the media page's reader of the blob store gives the
// object and its size, and storage.ErrNotFound for a missing one.
func TestConsoleOpenBlob(t *testing.T) {
	t.Parallel()
	store, err := local.New(local.Options{Dir: t.TempDir(), BaseURL: "http://blobs.invalid/blobs/"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := store.Put(ctx, "media/1/media.png", strings.NewReader("png"), 3, "image/png"); err != nil {
		t.Fatal(err)
	}
	open := consoleOpenBlob(store)
	body, size, err := open(ctx, "media/1/media.png")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if string(got) != "png" || size != 3 {
		t.Errorf("got %q, %d bytes", got, size)
	}
	if _, _, err := open(ctx, "media/2/media.png"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("missing object: %v", err)
	}
}
