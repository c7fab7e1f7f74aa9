package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/web"
)

// TestAdminOAuth: passwords, callback URLs and OAuth 2.0 clients through
// the admin commands, and bootstrap's OAuth fields (stable across runs,
// usable: the password checks, the secret is the stored one).
func TestAdminOAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := storagetest.NewDB(t)
	run := func(verb string, o adminFlags) map[string]any {
		t.Helper()
		out, err := adminCommand(ctx, db, nil, verb, o)
		if err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
		raw, _ := json.Marshal(out)
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	first := run("bootstrap", adminFlags{})
	again := run("bootstrap", adminFlags{})
	for _, k := range []string{"password", "client_id", "client_secret", "callback_url"} {
		if first[k] == "" || first[k] == nil || first[k] != again[k] {
			t.Errorf("bootstrap %s: %v then %v", k, first[k], again[k])
		}
	}
	_, hash, err := db.UserPassword(ctx, demoUsername)
	if err != nil || !web.CheckPassword(hash, first["password"].(string)) {
		t.Errorf("the printed demo password does not log in (%v)", err)
	}
	app, _ := db.AppByName(ctx, demoApp)
	for _, cb := range []string{DemoCallbackURL, "oob"} {
		if ok, _ := db.HasCallbackURL(ctx, app.ID, cb); !ok {
			t.Errorf("demo callback %s not registered", cb)
		}
	}
	if !app.SignInEnabled {
		t.Error("bootstrap left the demo app's sign-in off")
	}
	// An operator rotation is undone by the next bootstrap (the printed
	// secret must keep working).
	rotated := run("client rotate", adminFlags{App: demoApp})
	if rotated["client_secret"] == first["client_secret"] || rotated["client_id"] != first["client_id"] {
		t.Errorf("rotate: %v", rotated)
	}
	run("bootstrap", adminFlags{})
	c, _, _ := db.OAuth2ClientByID(ctx, first["client_id"].(string))
	if !bytes.Equal(c.SecretHash, postgres.HashSecret(first["client_secret"].(string))) {
		t.Error("bootstrap did not put the demo client secret back")
	}

	// Passwords: given, or random and printed.
	if _, err := db.CreateUser(ctx, "bob", "Bob"); err != nil {
		t.Fatal(err)
	}
	if out := run("user password", adminFlags{User: "bob", Password: "hunter2hunter2"}); out["password"] != nil {
		t.Errorf("a given password was printed: %v", out)
	}
	_, hash, _ = db.UserPassword(ctx, "bob")
	if !web.CheckPassword(hash, "hunter2hunter2") {
		t.Error("password not set")
	}
	out := run("user password", adminFlags{User: "@Bob"})
	_, hash, _ = db.UserPassword(ctx, "bob")
	if p, _ := out["password"].(string); p == "" || !web.CheckPassword(hash, p) {
		t.Errorf("random password %v does not log in", out)
	}
	if _, err := adminCommand(ctx, db, nil, "user password", adminFlags{User: "bob", Password: "short"}); err == nil {
		t.Error("a short password was accepted")
	}

	// Callbacks and client types.
	if _, err := db.CreateApp(ctx, "spa", ""); err != nil {
		t.Fatal(err)
	}
	run("callback add", adminFlags{App: "spa", Callback: "myapp://cb"})
	list := run("callback add", adminFlags{App: "spa", Callback: "https://spa.example/cb"})
	if urls, _ := list["callback_urls"].([]any); len(urls) != 2 {
		t.Errorf("callback list %v", list)
	}
	if l := run("callback remove", adminFlags{App: "spa", Callback: "myapp://cb"}); len(l["callback_urls"].([]any)) != 1 {
		t.Errorf("after remove %v", l)
	}
	if _, err := adminCommand(ctx, db, nil, "callback remove", adminFlags{App: "spa", Callback: "myapp://cb"}); err == nil {
		t.Error("removing an unknown callback succeeded")
	}
	for _, bad := range []string{"javascript:alert(1)", "/relative", "https://spa.example/cb#x", "OOB"} {
		if _, err := adminCommand(ctx, db, nil, "callback add", adminFlags{App: "spa", Callback: bad}); err == nil {
			t.Errorf("callback %q was registered", bad)
		}
	}
	// The sign-in setting.
	for _, tt := range []struct {
		flags adminFlags
		want  any // nil: refused
	}{
		{adminFlags{App: "spa", Enable: true}, true},
		{adminFlags{App: "spa", Disable: true}, false},
		{adminFlags{App: "spa"}, nil},
		{adminFlags{App: "spa", Enable: true, Disable: true}, nil},
	} {
		out, err := adminCommand(ctx, db, nil, "app sign-in", tt.flags)
		if tt.want == nil {
			if err == nil {
				t.Errorf("app sign-in %+v accepted", tt.flags)
			}
			continue
		}
		if m, _ := out.(map[string]any); err != nil || m["sign_in_enabled"] != tt.want {
			t.Errorf("app sign-in %+v: %v %v", tt.flags, out, err)
		}
	}
	shown := run("client show", adminFlags{App: "spa"})
	if shown["client_secret"] == nil || shown["client_type"] != "confidential" {
		t.Errorf("first client show %v: want the new secret once", shown)
	}
	if again := run("client show", adminFlags{App: "spa"}); again["client_secret"] != nil || again["client_id"] != shown["client_id"] {
		t.Errorf("second client show %v", again)
	}
	if pub := run("client rotate", adminFlags{App: "spa", ClientType: "public"}); pub["client_type"] != "public" || pub["client_secret"] != nil {
		t.Errorf("public client %v", pub)
	}
	if _, err := adminCommand(ctx, db, nil, "client rotate", adminFlags{App: "spa", ClientType: "secretive"}); err == nil || !strings.Contains(err.Error(), "client type") {
		t.Errorf("unknown client type: %v", err)
	}
}
