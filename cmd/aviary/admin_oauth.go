package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/web"
	"github.com/aviary-dev/aviary/web/oauth"
)

// DemoCallbackURL is the demo app's registered OAuth callback. Not
// localhost:8080: Aviary's own default listener is there, and so is the
// platform CLI xurl's default callback (docs/oauth.md, "Ports").
const DemoCallbackURL = "http://localhost:8739/callback"

// oauthVerbs are the admin commands of this file.
var oauthVerbs = []string{"user password", "app sign-in", "callback add", "callback remove", "callback list", "client show", "client rotate"}

// demoOAuth is what bootstrap prints about OAuth: the demo user's password,
// the demo app's OAuth 2.0 client and its registered callback.
type demoOAuth struct {
	Password     string `json:"password"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	CallbackURL  string `json:"callback_url"`
}

// demoSecret derives a demo credential from the demo app's consumer secret
// (kept in PostgreSQL), so bootstrap prints the same password and client
// secret on every run although only their hashes are stored.
func demoSecret(app storage.App, purpose string, n int) string {
	m := hmac.New(sha256.New, []byte(app.ConsumerSecret))
	m.Write([]byte(purpose))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))[:n]
}

// ensureDemoOAuth gives the demo user its derived password and the demo app
// a confidential client with its derived secret, the demo callback and oob
// (the PIN flow) registered, and "Sign in with" enabled (resetting them if
// an operator changed them).
func ensureDemoOAuth(ctx context.Context, db *postgres.DB, app storage.App, user storage.User) (demoOAuth, error) {
	out := demoOAuth{Password: demoSecret(app, "demo user password", 20), ClientSecret: demoSecret(app, "oauth2 client secret", 43),
		CallbackURL: DemoCallbackURL}
	_, hash, err := db.UserPassword(ctx, user.Username)
	if err != nil {
		return out, err
	}
	if !web.CheckPassword(hash, out.Password) {
		if hash, err = web.HashPassword(out.Password); err != nil {
			return out, err
		}
		if err := db.SetUserPassword(ctx, user.ID, hash); err != nil {
			return out, err
		}
	}
	c, _, err := db.SetOAuth2ClientSecret(ctx, app.ID, out.ClientSecret)
	if err != nil {
		return out, err
	}
	out.ClientID = c.ClientID
	for _, cb := range []string{DemoCallbackURL, "oob"} { // oob: the PIN flow
		if err := db.AddCallbackURL(ctx, app.ID, cb); err != nil {
			return out, err
		}
	}
	_, err = db.SetAppSignIn(ctx, app.ID, true)
	return out, err
}

func oauthCommand(ctx context.Context, db *postgres.DB, verb string, o adminFlags) (any, error) {
	if verb == "user password" {
		return setPassword(ctx, db, o)
	}
	app, err := requiredApp(ctx, db, o)
	if err != nil {
		return nil, err
	}
	switch verb {
	case "app sign-in":
		if o.Enable == o.Disable {
			return nil, errors.New("give one of --enable and --disable")
		}
		app, err := db.SetAppSignIn(ctx, app.ID, o.Enable)
		if err != nil {
			return nil, err
		}
		return map[string]any{"app": app.Name, "sign_in_enabled": app.SignInEnabled}, nil
	case "callback add", "callback remove":
		if o.Callback == "" {
			return nil, errors.New("--callback is required")
		}
		if verb == "callback add" {
			if err := oauth.CheckCallback(o.Callback); err != nil {
				return nil, fmt.Errorf("--callback %q: %w", o.Callback, err)
			}
			err = db.AddCallbackURL(ctx, app.ID, o.Callback)
		} else {
			err = db.RemoveCallbackURL(ctx, app.ID, o.Callback)
		}
		if err != nil {
			return nil, err
		}
		fallthrough
	case "callback list":
		urls, err := db.CallbackURLs(ctx, app.ID)
		if urls == nil {
			urls = []string{}
		}
		return map[string]any{"app": app.Name, "callback_urls": urls}, err
	case "client show":
		c, secret, err := db.EnsureOAuth2Client(ctx, app.ID)
		if err != nil {
			return nil, err
		}
		return clientJSON(app, c, secret), nil
	case "client rotate":
		kind := o.ClientType
		if kind == "" {
			c, _, err := db.EnsureOAuth2Client(ctx, app.ID)
			if err != nil {
				return nil, err
			}
			kind = c.Type
		}
		c, secret, err := db.SetOAuth2Client(ctx, app.ID, kind)
		if err != nil {
			return nil, err
		}
		return clientJSON(app, c, secret), nil
	}
	return nil, fmt.Errorf("unknown command %q", verb)
}

// clientJSON renders a client; client_secret only when just issued.
func clientJSON(app storage.App, c storage.OAuth2Client, secret string) map[string]any {
	out := map[string]any{"app": app.Name, "client_id": c.ClientID, "client_type": c.Type}
	if secret != "" {
		out["client_secret"] = secret
	}
	return out
}

func setPassword(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if o.User == "" {
		return nil, errors.New("--user is required")
	}
	user, err := findUser(ctx, db, o.User)
	if err != nil {
		return nil, err
	}
	password, printed := o.Password, false
	if password == "" {
		if password, err = ids.Token(20); err != nil {
			return nil, err
		}
		printed = true
	}
	hash, err := web.HashPassword(password)
	if err != nil {
		return nil, err
	}
	if err := db.SetUserPassword(ctx, user.ID, hash); err != nil {
		return nil, err
	}
	out := map[string]any{"user_id": ids.Format(user.ID), "username": user.Username}
	if printed {
		out["password"] = password
	}
	return out, nil
}
