package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

const adminUsage = `usage: aviary admin <command> [flags]

commands:
  bootstrap [--json]                               create (once) and print the demo app, user, tokens, ad account
                                                   and its funding instrument (and demo ad features)
  app create --name NAME [--callback URL]          register an app; prints its consumer key/secret and a bearer token
  bearer create --app NAME                         issue another bearer token for an app
  bearer revoke --token TOKEN                      revoke a bearer token
  user create --username NAME [--name DISPLAY]     create a user
  token create --app NAME --user USERNAME [--access read|read-write]
                                                   issue (or show) the user's OAuth 1.0a access token for an app
  token revoke --token TOKEN                       revoke an OAuth 1.0a access token
  user state --user USERNAME --state STATE         set protected, unprotected, suspended, unsuspended,
                                                   deactivated, reactivated, deleted or active
  user premium <id|username> on|off                set a user's premium flag (larger media limits)
  user verified <id|username> on|off               set a user's verified flag (larger media limits)
  user admin <id|username> on|off                  make a user a console administrator (sees every app and user;
                                                   docs/console.md)
  user profile <id|username> [--description TEXT] [--location TEXT] [--url URL] [--image URL]
               [--country XX] [--pinned POST_ID|none]
                                                   set the given profile fields ("" clears one); prints the profile
  user update --user NAME [--bio TEXT] [--name DISPLAY] [--handle NAME] [--url URL] [--location TEXT]
              [--image URL] [--verified on|off] [--banner URL] [--affiliate on|off]
                                                   change the given profile fields; one profile.update.* activity
                                                   event per changed field (docs/activity.md); prints the changes
  app tier <app id|name> self-serve|enterprise     set an app's access tier (enterprise: replies unrestricted, quotes)
  app usage --app NAME [--read-cap N] [--write-cap N]   an app's usage caps (-1: the server default) and usage
  app credits --app NAME [--add N]                 add credits to an app (negative: take away); prints the balance
  ads account <user id|username> <name>            create a production ads account owned by the user
  ads grant <account_id> <user id|username>        let a user use an ads account
  ads revoke <account_id> <user id|username>       take a granted user's access away (not the owner's)
  ads feature <account_id> <FEATURE> on|off        grant or withdraw an ads account feature
  ads funding-instrument <account_id> [--type CREDIT_CARD] [--currency USD]
                                                   create an active funding instrument; prints its id
  place set ID COUNTRY [NAME]                      add or replace a place posts may name in geo.place_id
                                                   (COUNTRY: ISO 3166-1 alpha-2)
  user password --user USERNAME [--password P]     set the password the user logs in to the consent pages with
                                                   (argon2id; without --password a random one is printed)
  callback add|remove --app NAME --callback URL    register or remove an OAuth callback URL (exact match)
  callback list --app NAME                         the app's registered callback URLs
  app sign-in --app NAME --enable|--disable        "Sign in with": GET /oauth/authenticate skips consent for users
                                                   who already approved the app (docs/oauth.md)
  client show --app NAME                           the app's OAuth 2.0 client_id and type (registers a client once)
  client rotate --app NAME [--client-type confidential|public]
                                                   issue a new client secret (public: none); prints it once
` + broadcastUsage + `  insights queries [--since DURATION] [--limit N]  the keyword insights queries of the last DURATION (24h),
                                                   newest first, at most N (100): one JSON object a line
` + dmUsage + stateUsage + `Every command prints one JSON object (insights queries: one per line). Revocations and state changes are
announced on Redis pub/sub so every API replica drops its cached copy at once
(if Redis is unreachable a warning is printed: the copies expire within
AVIARY_AUTH_CACHE_TTL, 2s by default).
`

// Demo identity created by bootstrap.
const (
	demoApp       = "aviary-demo"
	demoUsername  = "aviary_demo"
	demoUserName  = "Aviary Demo"
	demoAdAccount = "Aviary Demo Account"
)

func runAdmin(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" {
		fmt.Fprint(stdout, adminUsage)
		return nil
	}
	verb := args[0]
	rest := args[1:]
	if verb != "bootstrap" && !isStateVerb(verb) {
		if len(rest) == 0 {
			fmt.Fprint(stderr, adminUsage)
			return fmt.Errorf("admin %s: missing subcommand", verb)
		}
		verb += " " + rest[0]
		rest = rest[1:]
	}
	fs := flag.NewFlagSet("aviary admin "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, err := bindConfig(fs)
	if err != nil {
		return err
	}
	opts := adminFlags{}
	opts.bind(fs)
	if opts.Args, err = parseInterspersed(fs, rest); err != nil {
		return err
	}
	opts.Given = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { opts.Given[f.Name] = true })
	if err := cfg.validate(); err != nil {
		return err
	}
	db, err := postgres.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer db.Close()
	ann, err := newAnnouncer(cfg, stderr)
	if err != nil {
		return err
	}
	defer ann.close()
	var out any
	if isStateVerb(verb) {
		out, err = runStateCommand(ctx, cfg, db, verb, opts, stdout, stderr)
	} else {
		out, err = adminCommand(ctx, db, ann, verb, opts)
	}
	if err != nil {
		return fmt.Errorf("admin %s: %w", verb, err)
	}
	if out == nil {
		return nil // export to stdout: the snapshot was the output
	}
	enc := json.NewEncoder(stdout)
	if lines, ok := out.(jsonLines); ok {
		return lines.encode(enc)
	}
	if !opts.JSON {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(out)
}

type adminFlags struct {
	JSON                                        bool
	Name, Callback, App, User, Username, Access string
	State, Token                                string
	// FundingType and Currency are ads funding-instrument's --type and
	// --currency.
	FundingType, Currency string
	// Password and ClientType are user password's --password and client
	// rotate's --client-type (admin_oauth.go).
	Password, ClientType string
	// Enable and Disable are app sign-in's --enable and --disable.
	Enable, Disable bool
	// Description, Location, URL, Image, Country and Pinned are user
	// profile's fields; only the given ones change.
	Description, Location, URL, Image, Country, Pinned optString
	// Bio, Handle and Verified are user update's --bio, --handle and
	// --verified (with --name, --url, --location and --image).
	Bio, Handle, Verified optString
	// Given names the flags given on the command line.
	Given map[string]bool
	// Since and Limit are insights queries' --since and --limit.
	Since time.Duration
	Limit int
	// Args are the positional arguments (user premium|verified, ads ...).
	Args []string
	// DM are the dm and chat commands' flags (admin_dm.go).
	DM dmFlags
	// Live are the Space and broadcast commands' flags (admin_broadcast.go).
	Live liveFlags
	// Usage are app usage's and app credits' flags (admin_usage.go).
	Usage usageFlags
	// St are the state commands' flags (admin_state.go).
	St stateFlags
}

// optString is a string flag that knows whether it was given, so that an
// empty value can clear a field and a missing flag leaves it alone.
type optString struct {
	set   bool
	value string
}

func (o *optString) String() string { return o.value }

func (o *optString) Set(v string) error {
	o.set, o.value = true, v
	return nil
}

// ptr is the value when the flag was given, nil otherwise.
func (o optString) ptr() *string {
	if !o.set {
		return nil
	}
	v := o.value
	return &v
}

// parseInterspersed parses args with fs, flags before, between or after the
// positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// positionalVerbs are the commands that take positional arguments.
var positionalVerbs = map[string]bool{"user premium": true, "user verified": true, "user admin": true, "user profile": true, "app tier": true,
	"ads grant": true, "ads revoke": true, "ads feature": true, "ads funding-instrument": true, "ads account": true,
	"place set": true}

func (o *adminFlags) bind(fs *flag.FlagSet) {
	fs.BoolVar(&o.JSON, "json", false, "print compact JSON")
	fs.BoolVar(&o.Enable, "enable", false, "app sign-in: turn it on")
	fs.BoolVar(&o.Disable, "disable", false, "app sign-in: turn it off")
	fs.StringVar(&o.Name, "name", "", "name of the app, or display name of the user")
	fs.StringVar(&o.Callback, "callback", "", "OAuth callback URL of the app")
	fs.StringVar(&o.App, "app", "", "app name")
	fs.StringVar(&o.User, "user", "", "username")
	fs.StringVar(&o.Username, "username", "", "username of a new user")
	fs.StringVar(&o.Access, "access", "read-write", "access level: read or read-write")
	fs.StringVar(&o.State, "state", "", "user state: "+strings.Join(storage.UserStates, ", "))
	fs.StringVar(&o.Token, "token", "", "bearer or access token to revoke")
	fs.StringVar(&o.FundingType, "type", "CREDIT_CARD", "funding instrument type: "+strings.Join(storage.FundingInstrumentTypes, ", "))
	fs.StringVar(&o.Currency, "currency", "USD", "funding instrument currency (ISO 4217)")
	fs.Var(&o.Description, "description", "user profile: description")
	fs.Var(&o.Location, "location", "user profile: location")
	fs.Var(&o.URL, "url", "user profile: website (http or https URL)")
	fs.Var(&o.Image, "image", "user profile: profile image URL (http or https)")
	fs.Var(&o.Country, "country", "user profile: country (ISO 3166-1 alpha-2)")
	fs.Var(&o.Pinned, "pinned", "user profile: id of the user's own post to pin, or none")
	fs.Var(&o.Bio, "bio", "user update: bio (description)")
	fs.Var(&o.Handle, "handle", "user update: username")
	fs.Var(&o.Verified, "verified", "user update: verified badge, on or off")
	fs.DurationVar(&o.Since, "since", 24*time.Hour, "insights queries: how far back")
	fs.IntVar(&o.Limit, "limit", defaultQueriesLimit, "insights queries: at most this many")
	fs.StringVar(&o.Password, "password", "", "user password: the new password (empty: a random one, printed)")
	fs.StringVar(&o.ClientType, "client-type", "", "client rotate: confidential or public (empty: unchanged)")
	o.DM.bind(fs)
	o.Live.bind(fs)
	o.Usage.bind(fs)
	o.St.bind(fs)
}

func adminCommand(ctx context.Context, db *postgres.DB, ann *announcer, verb string, o adminFlags) (any, error) {
	if len(o.Args) > 0 && !positionalVerbs[verb] {
		return nil, fmt.Errorf("unexpected argument %q (see aviary admin help)", o.Args[0])
	}
	switch verb {
	case "bootstrap":
		return bootstrap(ctx, db)
	case "app create":
		return createApp(ctx, db, o)
	case "bearer create":
		return createBearer(ctx, db, o)
	case "user create":
		return createUser(ctx, db, o)
	case "token create":
		return createToken(ctx, db, o)
	case "user state":
		return setUserState(ctx, db, ann, o)
	case "bearer revoke":
		return revokeBearer(ctx, db, ann, o)
	case "token revoke":
		return revokeToken(ctx, db, ann, o)
	case "user premium":
		return setUserFlag(ctx, db, ann, postgres.UserFlagPremium, o)
	case "user verified":
		return setUserFlag(ctx, db, ann, postgres.UserFlagVerified, o)
	case "user admin":
		return setUserAdmin(ctx, db, o)
	case "user profile":
		return setUserProfile(ctx, db, ann, o)
	case "user update":
		return updateUser(ctx, db, ann, o)
	case "app tier":
		return setAppTier(ctx, db, ann, o)
	case "place set":
		return setPlace(ctx, db, o)
	case "insights queries":
		return insightQueries(ctx, db, o)
	case "app usage", "app credits":
		return usageCommand(ctx, db, verb, o)
	}
	if slices.Contains(adsVerbs, verb) {
		return adsCommand(ctx, db, verb, o)
	}
	if slices.Contains(oauthVerbs, verb) {
		return oauthCommand(ctx, db, verb, o)
	}
	if isDMVerb(verb) {
		return dmCommand(ctx, db, verb, o)
	}
	if slices.Contains(broadcastVerbs, verb) {
		return broadcastCommand(ctx, db, verb, o)
	}
	return nil, fmt.Errorf("unknown command (see aviary admin help)")
}

// bootstrapResult is the one JSON object bootstrap prints.
type bootstrapResult struct {
	ConsumerKey       string `json:"consumer_key"`
	ConsumerSecret    string `json:"consumer_secret"`
	BearerToken       string `json:"bearer_token"`
	AccessToken       string `json:"access_token"`
	AccessTokenSecret string `json:"access_token_secret"`
	UserID            string `json:"user_id"`
	Username          string `json:"username"`
	AdsAccountID      string `json:"ads_account_id"`
	// FundingInstrumentID is the demo ads account's active funding
	// instrument.
	FundingInstrumentID string `json:"funding_instrument_id"`
	demoOAuth
}

// bootstrap idempotently creates the demo identity; a second run returns the
// same values.
func bootstrap(ctx context.Context, db *postgres.DB) (bootstrapResult, error) {
	app, err := ensureApp(ctx, db, demoApp, "")
	if err != nil {
		return bootstrapResult{}, err
	}
	bearer, err := ensureBearer(ctx, db, app.ID)
	if err != nil {
		return bootstrapResult{}, err
	}
	user, err := ensureUser(ctx, db, demoUsername, demoUserName)
	if err != nil {
		return bootstrapResult{}, err
	}
	if err := db.SetAppOwner(ctx, app.ID, user.ID); err != nil { // the console shows it to the demo user
		return bootstrapResult{}, err
	}
	token, err := db.EnsureAccessToken(ctx, app.ID, user.ID, "read-write")
	if err != nil {
		return bootstrapResult{}, err
	}
	account, err := db.EnsureAdAccount(ctx, user.ID, demoAdAccount)
	if err != nil {
		return bootstrapResult{}, err
	}
	fundingID, err := ensureDemoAds(ctx, db, account.ID)
	if err != nil {
		return bootstrapResult{}, err
	}
	demo, err := ensureDemoOAuth(ctx, db, app, user)
	if err != nil {
		return bootstrapResult{}, err
	}
	return bootstrapResult{
		ConsumerKey: app.ConsumerKey, ConsumerSecret: app.ConsumerSecret, BearerToken: bearer.Token,
		AccessToken: token.Token, AccessTokenSecret: token.Secret, UserID: ids.Format(user.ID),
		Username: user.Username, AdsAccountID: account.ID, FundingInstrumentID: fundingID, demoOAuth: demo,
	}, nil
}

// ensureApp loads an app by name or creates it; a concurrent creator wins
// the unique constraint and its row is loaded.
func ensureApp(ctx context.Context, db *postgres.DB, name, callback string) (storage.App, error) {
	app, err := db.AppByName(ctx, name)
	if !errors.Is(err, storage.ErrNotFound) {
		return app, err
	}
	app, err = db.CreateApp(ctx, name, callback)
	if errors.Is(err, storage.ErrConflict) {
		return db.AppByName(ctx, name)
	}
	return app, err
}

func ensureBearer(ctx context.Context, db *postgres.DB, appID int64) (storage.BearerToken, error) {
	t, err := db.FirstBearerToken(ctx, appID)
	if errors.Is(err, storage.ErrNotFound) {
		if _, err := db.CreateBearerToken(ctx, appID); err != nil {
			return t, err
		}
		return db.FirstBearerToken(ctx, appID)
	}
	return t, err
}

func ensureUser(ctx context.Context, db *postgres.DB, username, name string) (storage.User, error) {
	u, err := db.UserByUsername(ctx, username)
	if !errors.Is(err, storage.ErrNotFound) {
		return u, err
	}
	u, err = db.CreateUser(ctx, username, name)
	if errors.Is(err, storage.ErrConflict) {
		return db.UserByUsername(ctx, username)
	}
	return u, err
}

func createApp(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if o.Name == "" {
		return nil, errors.New("--name is required")
	}
	app, err := db.CreateApp(ctx, o.Name, o.Callback)
	if err != nil {
		return nil, err
	}
	bearer, err := db.CreateBearerToken(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	return map[string]string{"app_id": ids.Format(app.ID), "name": app.Name, "consumer_key": app.ConsumerKey,
		"consumer_secret": app.ConsumerSecret, "bearer_token": bearer.Token}, nil
}

func createBearer(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	app, err := db.AppByName(ctx, o.App)
	if err != nil {
		return nil, fmt.Errorf("--app %q: %w", o.App, err)
	}
	bearer, err := db.CreateBearerToken(ctx, app.ID)
	if err != nil {
		return nil, err
	}
	return map[string]string{"app": app.Name, "bearer_token": bearer.Token}, nil
}

func createUser(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if o.Username == "" {
		return nil, errors.New("--username is required")
	}
	u, err := db.CreateUser(ctx, o.Username, o.Name)
	if err != nil {
		return nil, err
	}
	return renderUser(u), nil
}

func createToken(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if o.Access != "read" && o.Access != "read-write" {
		return nil, fmt.Errorf("--access %q: want read or read-write", o.Access)
	}
	app, err := db.AppByName(ctx, o.App)
	if err != nil {
		return nil, fmt.Errorf("--app %q: %w", o.App, err)
	}
	u, err := db.UserByUsername(ctx, o.User)
	if err != nil {
		return nil, fmt.Errorf("--user %q: %w", o.User, err)
	}
	t, err := db.EnsureAccessToken(ctx, app.ID, u.ID, o.Access)
	if err != nil {
		return nil, err
	}
	return map[string]string{"app": app.Name, "user_id": ids.Format(u.ID), "username": u.Username,
		"access_token": t.Token, "access_token_secret": t.Secret, "access_level": t.AccessLevel}, nil
}

func setUserState(ctx context.Context, db *postgres.DB, ann *announcer, o adminFlags) (any, error) {
	u, err := db.UserByUsername(ctx, o.User)
	if err != nil {
		return nil, fmt.Errorf("--user %q: %w", o.User, err)
	}
	u, err = db.SetUserState(ctx, u.ID, o.State, time.Now().UTC())
	if err != nil {
		return nil, err
	}
	ann.announce(ctx, func(ctx context.Context, p *auth.Publisher) error { return p.UserChanged(ctx, u.ID) })
	return renderUser(u), nil
}

// setUserFlag sets the premium or verified flag of the user named by
// o.Args: <id|username> on|off. The authenticated user the credential
// caches keep carries the flags (premium users may edit posts), so the
// change is announced.
func setUserFlag(ctx context.Context, db *postgres.DB, ann *announcer, flag string, o adminFlags) (any, error) {
	if len(o.Args) != 2 {
		return nil, fmt.Errorf("want <id|username> on|off, got %d arguments", len(o.Args))
	}
	on, err := parseOnOff(o.Args[1])
	if err != nil {
		return nil, err
	}
	u, err := findUser(ctx, db, o.Args[0])
	if err != nil {
		return nil, err
	}
	if err := db.SetUserFlag(ctx, u.ID, flag, on); err != nil {
		return nil, err
	}
	ann.announce(ctx, func(ctx context.Context, p *auth.Publisher) error { return p.UserChanged(ctx, u.ID) })
	return map[string]any{"user_id": ids.Format(u.ID), "username": u.Username, flag: on}, nil
}

// setUserProfile changes the profile fields given as flags of the user
// named by o.Args: <id|username>, and prints the profile (with no flag, it
// only prints it). The change is announced: the credential caches keep the
// authenticated user with its profile.
func setUserProfile(ctx context.Context, db *postgres.DB, ann *announcer, o adminFlags) (any, error) {
	if err := wantArgs(o, 1, "<id|username>"); err != nil {
		return nil, err
	}
	change := postgres.ProfileChange{Description: o.Description.ptr(), Location: o.Location.ptr(), URL: o.URL.ptr(),
		ProfileImageURL: o.Image.ptr(), CountryCode: o.Country.ptr()}
	for _, f := range []struct {
		name  string
		value *string
	}{{"--url", change.URL}, {"--image", change.ProfileImageURL}} {
		if f.value != nil && *f.value != "" && !webURL(*f.value) {
			return nil, fmt.Errorf("%s %q: want an http or https URL (or \"\" to clear it)", f.name, *f.value)
		}
	}
	if o.Pinned.set {
		pinned, err := parsePinned(o.Pinned.value)
		if err != nil {
			return nil, err
		}
		change.PinnedPostID = &pinned
	}
	u, err := findUser(ctx, db, o.Args[0])
	if err != nil {
		return nil, err
	}
	if change == (postgres.ProfileChange{}) {
		return renderProfile(u), nil
	}
	if u, err = db.SetUserProfile(ctx, u.ID, change); err != nil {
		return nil, err
	}
	ann.announce(ctx, func(ctx context.Context, p *auth.Publisher) error { return p.UserChanged(ctx, u.ID) })
	return renderProfile(u), nil
}

// parsePinned reads --pinned: a post id, or none (also "" or 0) to unpin.
func parsePinned(s string) (int64, error) {
	switch strings.ToLower(s) {
	case "", "0", "none":
		return 0, nil
	}
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, fmt.Errorf("--pinned %q: want a post id or none", s)
	}
	return id, nil
}

// webURL reports whether s is an absolute http or https URL with a host.
func webURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func renderProfile(u storage.User) map[string]any {
	var pinned any
	if u.PinnedPostID != 0 {
		pinned = ids.Format(u.PinnedPostID)
	}
	return map[string]any{"user_id": ids.Format(u.ID), "username": u.Username, "description": u.Description,
		"location": u.Location, "url": u.URL, "profile_image_url": u.ProfileImageURL, "country_code": u.CountryCode,
		"pinned_post_id": pinned, "verified": u.Verified, "premium": u.Premium}
}

// setAppTier sets the access tier of the app named by o.Args:
// <app id|name> self-serve|enterprise, and announces it (the credential
// caches keep apps with their tier).
func setAppTier(ctx context.Context, db *postgres.DB, ann *announcer, o adminFlags) (any, error) {
	if err := wantArgs(o, 2, "<app id|name> self-serve|enterprise"); err != nil {
		return nil, err
	}
	tier := strings.ToLower(o.Args[1])
	if tier != storage.TierSelfServe && tier != storage.TierEnterprise {
		return nil, fmt.Errorf("%q: want %s or %s", o.Args[1], storage.TierSelfServe, storage.TierEnterprise)
	}
	app, err := findApp(ctx, db, o.Args[0])
	if err != nil {
		return nil, err
	}
	if app, err = db.SetAppTier(ctx, app.ID, tier); err != nil {
		return nil, err
	}
	ann.announce(ctx, func(ctx context.Context, p *auth.Publisher) error { return p.AppChanged(ctx, app.ConsumerKey) })
	return map[string]any{"app_id": ids.Format(app.ID), "name": app.Name, "tier": app.Tier}, nil
}

// findApp loads an app by id or, failing that, by name (a name may be all
// digits).
// requiredApp is the app --app names; it is required.
func requiredApp(ctx context.Context, db *postgres.DB, o adminFlags) (storage.App, error) {
	if o.App == "" {
		return storage.App{}, errors.New("--app is required")
	}
	return findApp(ctx, db, o.App)
}

func findApp(ctx context.Context, db *postgres.DB, ref string) (storage.App, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		app, err := db.AppByID(ctx, id)
		if !errors.Is(err, storage.ErrNotFound) {
			return app, err
		}
	}
	app, err := db.AppByName(ctx, ref)
	if err != nil {
		return app, fmt.Errorf("app %q: %w", ref, err)
	}
	return app, nil
}

func parseOnOff(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q: want on or off", s)
}

// findUser loads a user by id or, failing that, by username (a leading @
// is ignored): a handle may be all digits.
func findUser(ctx context.Context, db *postgres.DB, ref string) (storage.User, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil && id > 0 {
		u, err := db.UserByID(ctx, id)
		if !errors.Is(err, storage.ErrNotFound) {
			return u, err
		}
	}
	u, err := db.UserByUsername(ctx, strings.TrimPrefix(ref, "@"))
	if err != nil {
		return u, fmt.Errorf("user %q: %w", ref, err)
	}
	return u, nil
}

func revokeBearer(ctx context.Context, db *postgres.DB, ann *announcer, o adminFlags) (any, error) {
	if o.Token == "" {
		return nil, errors.New("--token is required")
	}
	if err := db.RevokeBearerToken(ctx, o.Token); err != nil {
		return nil, err
	}
	ann.announce(ctx, func(ctx context.Context, p *auth.Publisher) error { return p.BearerRevoked(ctx, o.Token) })
	return map[string]bool{"revoked": true}, nil
}

func revokeToken(ctx context.Context, db *postgres.DB, ann *announcer, o adminFlags) (any, error) {
	if o.Token == "" {
		return nil, errors.New("--token is required")
	}
	if err := db.RevokeAccessToken(ctx, o.Token); err != nil {
		return nil, err
	}
	ann.announce(ctx, func(ctx context.Context, p *auth.Publisher) error { return p.AccessTokenRevoked(ctx, o.Token) })
	return map[string]bool{"revoked": true}, nil
}

// announceTimeout bounds one announcement of a credential change.
const announceTimeout = 2 * time.Second

// announcer tells every API replica's credential cache (auth.Cache) about a
// committed revocation or user state change through Redis pub/sub. A failed
// announcement does not fail the command (the change is committed): it is
// reported on stderr, and the cached copies expire within their TTL.
type announcer struct {
	pub    *auth.Publisher
	close  func()
	stderr io.Writer
}

func newAnnouncer(cfg *config, stderr io.Writer) (*announcer, error) {
	rc, err := redisClient(cfg)
	if err != nil {
		return nil, err
	}
	return &announcer{pub: auth.NewPublisher(rc, auth.InvalidationChannel), close: func() { _ = rc.Close() }, stderr: stderr}, nil
}

// announce runs f with the publisher; nil announcer (tests) does nothing.
func (a *announcer) announce(ctx context.Context, f func(context.Context, *auth.Publisher) error) {
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, announceTimeout)
	defer cancel()
	if err := f(ctx, a.pub); err != nil {
		fmt.Fprintf(a.stderr, "warning: %v; API replicas drop their cached copy within their cache TTL (AVIARY_AUTH_CACHE_TTL, default %s)\n", err, auth.DefaultCacheTTL)
	}
}

func renderUser(u storage.User) map[string]any {
	stamp := func(t *time.Time) any {
		if t == nil {
			return nil
		}
		return t.UTC().Format(time.RFC3339)
	}
	return map[string]any{"user_id": ids.Format(u.ID), "username": u.Username, "name": u.Name,
		"protected_at": stamp(u.ProtectedAt), "suspended_at": stamp(u.SuspendedAt),
		"deactivated_at": stamp(u.DeactivatedAt), "deleted_at": stamp(u.DeletedAt)}
}
