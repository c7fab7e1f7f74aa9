package main

import (
	"github.com/redis/go-redis/v9"

	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// TestAdminAnnouncesCredentialChanges: the admin commands that revoke a
// token or change a user's state announce it on the credential caches'
// pub/sub channel, after the change is committed.
func TestAdminAnnouncesCredentialChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	ps, ann, stderr := listenAnnouncements(t)

	boot, err := bootstrap(ctx, db)
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	user, err := db.UserByUsername(ctx, boot.Username)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		verb string
		opts adminFlags
		want string
	}{
		{"user state", adminFlags{User: boot.Username, State: "suspended"}, "user:" + strconv.FormatInt(user.ID, 10)},
		{"bearer revoke", adminFlags{Token: boot.BearerToken}, "bearer:" + boot.BearerToken},
		{"token revoke", adminFlags{Token: boot.AccessToken}, "token:" + boot.AccessToken},
	}
	for _, tc := range cases {
		if _, err := adminCommand(ctx, db, ann, tc.verb, tc.opts); err != nil {
			t.Fatalf("%s: %v", tc.verb, err)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := ps.ReceiveMessage(rctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: no announcement: %v", tc.verb, err)
		}
		if msg.Payload != tc.want {
			t.Errorf("%s announced %q, want %q", tc.verb, msg.Payload, tc.want)
		}
	}
	if _, err := adminCommand(ctx, db, ann, "bearer revoke", adminFlags{Token: boot.BearerToken}); err == nil {
		t.Error("revoking a revoked bearer token succeeded")
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// listenAnnouncements subscribes to a fresh credential-cache channel and
// returns the subscription and an announcer publishing on it (its
// warnings go to the returned buffer).
func listenAnnouncements(t *testing.T) (*redis.PubSub, *announcer, *bytes.Buffer) {
	t.Helper()
	rc, prefix := storagetest.RedisPrefix(t)
	channel := prefix + "auth-invalidate"
	ps := rc.Subscribe(t.Context(), channel)
	t.Cleanup(func() { _ = ps.Close() })
	if _, err := ps.Receive(t.Context()); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	stderr := &bytes.Buffer{}
	return ps, &announcer{pub: auth.NewPublisher(rc, channel), close: func() {}, stderr: stderr}, stderr
}
