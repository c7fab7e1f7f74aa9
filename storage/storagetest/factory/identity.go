package factory

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// AppOpts are the options of App; the zero value of a field means its
// default.
type AppOpts struct {
	// Name defaults to "app-<random>".
	Name string
	// CallbackURL defaults to none.
	CallbackURL string
	// Tier defaults to storage.TierSelfServe; another is set through
	// SetAppTier.
	Tier string
}

// App registers an app with fresh consumer credentials.
func App(t testing.TB, db *postgres.DB, opts *AppOpts) storage.App {
	t.Helper()
	if opts == nil {
		opts = &AppOpts{}
	}
	name := opts.Name
	if name == "" {
		name = "app-" + suffix()
	}
	app, err := db.CreateApp(t.Context(), name, opts.CallbackURL)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	if opts.Tier != "" && opts.Tier != app.Tier {
		if app, err = db.SetAppTier(t.Context(), app.ID, opts.Tier); err != nil {
			t.Fatalf("factory: %v", err)
		}
	}
	return app
}

// BearerToken issues a new app-only bearer token for app.
func BearerToken(t testing.TB, db *postgres.DB, app storage.App) storage.BearerToken {
	t.Helper()
	tok, err := db.CreateBearerToken(t.Context(), app.ID)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	return tok
}

// BearerHeader issues a new bearer token for app and returns it as an
// Authorization header value ("Bearer <token>").
func BearerHeader(t testing.TB, db *postgres.DB, app storage.App) string {
	t.Helper()
	return "Bearer " + BearerToken(t, db, app).Token
}

// UserOpts are the options of User; the zero value of a field means its
// default.
type UserOpts struct {
	// Username defaults to "user_<random>" (15 characters, a valid handle).
	Username string
	// Name defaults to "Name of <username>".
	Name string
	// CreatedAt defaults to the time of creation; another time is set with
	// SQL. The user's id is allocated at creation all the same.
	CreatedAt time.Time
	// ProtectedAt, SuspendedAt, DeactivatedAt and DeletedAt put the user in
	// that state from that time, through SetUserState; nil leaves it out.
	ProtectedAt   *time.Time
	SuspendedAt   *time.Time
	DeactivatedAt *time.Time
	DeletedAt     *time.Time
	// Profile is set through SetUserProfile (its non-empty text fields and
	// a non-zero PinnedPostID, which must be a live post of the user's) and
	// SetUserFlag (Verified and Premium when true).
	Profile storage.Profile
}

// User registers a user in the states opts asks for.
func User(t testing.TB, db *postgres.DB, opts *UserOpts) storage.User {
	t.Helper()
	if opts == nil {
		opts = &UserOpts{}
	}
	ctx := t.Context()
	username := opts.Username
	if username == "" {
		username = "user_" + suffix()
	}
	name := opts.Name
	if name == "" {
		name = "Name of " + username
	}
	u, err := db.CreateUser(ctx, username, name)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	if err := setProfile(t, db, u.ID, opts.Profile); err != nil {
		t.Fatalf("factory: %v", err)
	}
	if !opts.CreatedAt.IsZero() {
		execOne(t, db, "set created_at of user "+username,
			`UPDATE users SET created_at = $2 WHERE id = $1`, u.ID, opts.CreatedAt)
	}
	for _, s := range []struct {
		state string
		at    *time.Time
	}{
		{"protected", opts.ProtectedAt},
		{"suspended", opts.SuspendedAt},
		{"deactivated", opts.DeactivatedAt},
		{"deleted", opts.DeletedAt},
	} {
		if s.at == nil {
			continue
		}
		if _, err := db.SetUserState(ctx, u.ID, s.state, *s.at); err != nil {
			t.Fatalf("factory: %v", err)
		}
	}
	if u, err = db.UserByID(ctx, u.ID); err != nil {
		t.Fatalf("factory: %v", err)
	}
	return u
}

// AccessToken returns app's unrevoked OAuth 1.0a access token for user,
// issuing one with access level level (storage.AccessRead or
// storage.AccessReadWrite; "" means read-write) if there is none. It fails
// the test if the user already has a token of app with another level.
func AccessToken(t testing.TB, db *postgres.DB, app storage.App, user storage.User, level string) storage.AccessToken {
	t.Helper()
	if level == "" {
		level = storage.AccessReadWrite
	}
	tok, err := db.EnsureAccessToken(t.Context(), app.ID, user.ID, level)
	if err != nil {
		t.Fatalf("factory: %v", err)
	}
	if tok.AccessLevel != level {
		t.Fatalf("factory: user %d already has a %s token of app %d, not %s", user.ID, tok.AccessLevel, app.ID, level)
	}
	return tok
}

// setProfile applies the non-zero fields of p to user id.
func setProfile(t testing.TB, db *postgres.DB, id int64, p storage.Profile) error {
	ctx := t.Context()
	var change postgres.ProfileChange
	some := false
	for _, f := range []struct {
		value string
		to    **string
	}{
		{p.Description, &change.Description}, {p.Location, &change.Location}, {p.URL, &change.URL},
		{p.ProfileImageURL, &change.ProfileImageURL}, {p.CountryCode, &change.CountryCode},
	} {
		if f.value != "" {
			*f.to = &f.value
			some = true
		}
	}
	if p.PinnedPostID != 0 {
		change.PinnedPostID = &p.PinnedPostID
		some = true
	}
	if some {
		if _, err := db.SetUserProfile(ctx, id, change); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		flag string
		on   bool
	}{{postgres.UserFlagVerified, p.Verified}, {postgres.UserFlagPremium, p.Premium}} {
		if f.on {
			if err := db.SetUserFlag(ctx, id, f.flag, true); err != nil {
				return err
			}
		}
	}
	return nil
}
