// Package usage meters the core API as the platform bills it
// (docs/usage-and-credits.md): per-app caps on posts read and written per
// period (past one, the platform's 429 usage-capped problem), a credit
// balance per app charged per resource (when it is spent, the platform's
// 402 CreditsDepleted), and GET /2/usage/tweets. Counting happens as
// responses are served: the endpoint kit (api/httpx) gives every metered
// endpoint the Meter's middleware, whose ResponseWriter sees the body
// WriteJSON encodes and counts the posts and users in it.
//
// Live counts are in Redis (one hash per app and period, one counter of
// credits spent per app), checked and incremented in one round trip each;
// every API process also adds what it counted to PostgreSQL in batches
// (Run), from which Redis is re-seeded when it lost a key.
package usage

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// Store is the durable record of usage (storage/postgres.DB).
type Store interface {
	AppUsageSettings(ctx context.Context, appID int64) (storage.UsageSettings, error)
	AddUsage(ctx context.Context, days []storage.UsageDay) error
	UsageDays(ctx context.Context, appID int64, from, to time.Time) ([]storage.UsageDay, error)
	UsageSince(ctx context.Context, appID int64, from time.Time) (storage.UsageCounts, error)
}

// Prices are the credits one unit of each resource costs; zero is free.
type Prices struct {
	PostRead  int64
	PostWrite int64
	UserRead  int64
}

// On reports whether any resource costs credits (credits are off otherwise).
func (p Prices) On() bool { return p.PostRead > 0 || p.PostWrite > 0 || p.UserRead > 0 }

// cost is what c costs at p.
func (p Prices) cost(c storage.UsageCounts) int64 {
	return c.PostsRead*p.PostRead + c.PostsWritten*p.PostWrite + c.UsersRead*p.UserRead
}

// Config is the metering policy; its zero value meters nothing but still
// records the counts.
type Config struct {
	// ReadCap and WriteCap are every app's caps on posts read and written
	// per period, unless the app has its own (0: unlimited).
	ReadCap, WriteCap int64
	// CapResetDay is the day of the month a period starts (1 to 28; 0 is 1).
	CapResetDay int
	// Prices charge credits per resource; all zero turns credits off.
	Prices Prices
	// SettingsTTL is how long an app's caps and credits are cached
	// (default 5s): an admin change shows within it.
	SettingsTTL time.Duration
	// FlushInterval is how often Run adds the counts to the store
	// (default 2s).
	FlushInterval time.Duration
}

// Deps are a Meter's backends.
type Deps struct {
	Store  Store
	Redis  redis.UniversalClient
	Prefix string // Redis key prefix, "aviary:"
	Errors apierr.Writer
	Logger *slog.Logger
	Now    func() time.Time
}

// Meter counts metered responses, enforces caps and credits and serves
// GET /2/usage/tweets.
type Meter struct {
	cfg  Config
	deps Deps

	mu       sync.Mutex
	settings map[int64]cachedSettings
	pending  map[dayKey]storage.UsageCounts
}

type cachedSettings struct {
	s       storage.UsageSettings
	expires time.Time
}

type dayKey struct {
	app int64
	day string // YYYY-MM-DD
}

// New builds a Meter; call Run to record counts in the store.
func New(cfg Config, d Deps) *Meter {
	if cfg.CapResetDay < 1 {
		cfg.CapResetDay = 1
	}
	if cfg.SettingsTTL <= 0 {
		cfg.SettingsTTL = 5 * time.Second
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = 2 * time.Second
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	return &Meter{cfg: cfg, deps: d, settings: map[int64]cachedSettings{}, pending: map[dayKey]storage.UsageCounts{}}
}

// Middleware implements httpx.Meter: the endpoints of the metered table get
// the check before and the count after; the others none.
func (m *Meter) Middleware(e httpx.Endpoint) func(http.Handler) http.Handler {
	res := ResourceOf(e.Pattern)
	if res == None {
		return nil
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			m.serve(w, r, res, next)
		})
	}
}

func (m *Meter) serve(w http.ResponseWriter, r *http.Request, res Resource, next http.Handler) {
	p, ok := auth.PrincipalFrom(r.Context())
	if !ok || p.App.ID == 0 {
		next.ServeHTTP(w, r)
		return
	}
	app := p.App.ID
	now := m.deps.Now().UTC()
	if err := m.admit(r.Context(), app, res, now); err != nil {
		m.deps.Errors.Write(w, r, err)
		return
	}
	mw := &meteredWriter{ResponseWriter: w, res: res}
	next.ServeHTTP(mw, r)
	if c := mw.counts(); !c.Zero() {
		// Served: counted even when the client has already gone.
		m.record(context.WithoutCancel(r.Context()), app, c, now)
	}
}

// admit refuses a request past its app's cap (429 usage-capped) or with
// no credits left (402 CreditsDepleted). When Redis does not answer the
// request is admitted (logged): metering must not take the API down.
func (m *Meter) admit(ctx context.Context, app int64, res Resource, now time.Time) error {
	readCap, writeCap := m.cfg.ReadCap, m.cfg.WriteCap
	credits := m.cfg.Prices.On() && m.priced(res)
	needRead := res == Posts
	needWrite := res == PostCreate
	s, err := m.appSettings(ctx, app, now)
	if err != nil {
		m.deps.Logger.WarnContext(ctx, "usage settings unavailable; request admitted", "app", app, "err", err)
		return nil
	}
	if s.ReadCap != nil {
		readCap = *s.ReadCap
	}
	if s.WriteCap != nil {
		writeCap = *s.WriteCap
	}
	needRead = needRead && readCap > 0
	needWrite = needWrite && writeCap > 0
	if !needRead && !needWrite && !credits {
		return nil
	}
	used, spent, err := m.live(ctx, app, now, credits)
	if err != nil {
		m.deps.Logger.WarnContext(ctx, "usage counts unavailable; request admitted", "app", app, "err", err)
		return nil
	}
	account := strconv.FormatInt(app, 10)
	switch {
	case needRead && used.PostsRead >= readCap, needWrite && used.PostsWritten >= writeCap:
		return apierr.UsageCappedFor(apierr.PeriodMonthly, apierr.ScopeProduct, account, "")
	case credits && s.CreditsAdded-spent <= 0:
		return apierr.CreditsDepleted(account)
	}
	return nil
}

// priced reports whether a response of res can cost credits.
func (m *Meter) priced(res Resource) bool {
	p := m.cfg.Prices
	switch res {
	case Posts:
		return p.PostRead > 0 || p.UserRead > 0 // includes.users
	case Users:
		return p.UserRead > 0 || p.PostRead > 0 // includes.tweets
	case PostCreate:
		return p.PostWrite > 0
	}
	return false
}

// record adds c to the live counts and to the batch for the store.
func (m *Meter) record(ctx context.Context, app int64, c storage.UsageCounts, now time.Time) {
	c.CreditsSpent = m.cfg.Prices.cost(c)
	m.mu.Lock()
	k := dayKey{app: app, day: now.Format(time.DateOnly)}
	m.pending[k] = m.pending[k].Add(c)
	m.mu.Unlock()
	pipe := m.deps.Redis.Pipeline()
	pk := m.periodKey(app, now)
	if c.PostsRead > 0 {
		pipe.HIncrBy(ctx, pk, fieldRead, c.PostsRead)
	}
	if c.PostsWritten > 0 {
		pipe.HIncrBy(ctx, pk, fieldWritten, c.PostsWritten)
	}
	if c.UsersRead > 0 {
		pipe.HIncrBy(ctx, pk, fieldUsers, c.UsersRead)
	}
	pipe.Expire(ctx, pk, periodKeyTTL)
	if c.CreditsSpent > 0 {
		pipe.IncrBy(ctx, m.spentKey(app), c.CreditsSpent)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		m.deps.Logger.WarnContext(ctx, "usage counts not added to Redis (the store still gets them)", "app", app, "err", err)
	}
}

// Redis layout: {prefix}usage:{app}:p:{period start} is a hash of the
// period's counts (fields r, w, u); {prefix}usage:{app}:spent the credits
// spent over the app's lifetime.
const (
	fieldRead    = "r"
	fieldWritten = "w"
	fieldUsers   = "u"
	fieldSeeded  = "s"
	periodKeyTTL = 35 * 24 * time.Hour
)

func (m *Meter) periodKey(app int64, now time.Time) string {
	return fmt.Sprintf("%susage:%d:p:%s", m.deps.Prefix, app, PeriodStart(now, m.cfg.CapResetDay).Format("20060102"))
}

func (m *Meter) spentKey(app int64) string {
	return fmt.Sprintf("%susage:%d:spent", m.deps.Prefix, app)
}

// live reads the app's counts of the current period and, when wanted, its
// lifetime credits spent, seeding Redis from the store when it has lost
// them.
func (m *Meter) live(ctx context.Context, app int64, now time.Time, wantSpent bool) (storage.UsageCounts, int64, error) {
	pk, sk := m.periodKey(app, now), m.spentKey(app)
	pipe := m.deps.Redis.Pipeline()
	counts := pipe.HMGet(ctx, pk, fieldSeeded, fieldRead, fieldWritten)
	var spentCmd *redis.StringCmd
	if wantSpent {
		spentCmd = pipe.Get(ctx, sk)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return storage.UsageCounts{}, 0, fmt.Errorf("read usage of app %d: %w", app, err)
	}
	vals := counts.Val()
	if vals[0] == nil { // the period's hash was never seeded here (new period, or Redis lost it)
		if err := m.seedPeriod(ctx, app, now, pk); err != nil {
			return storage.UsageCounts{}, 0, err
		}
		return m.live(ctx, app, now, wantSpent)
	}
	used := storage.UsageCounts{PostsRead: asInt(vals[1]), PostsWritten: asInt(vals[2])}
	if !wantSpent {
		return used, 0, nil
	}
	if errors.Is(spentCmd.Err(), redis.Nil) {
		if err := m.seedSpent(ctx, app, sk); err != nil {
			return storage.UsageCounts{}, 0, err
		}
		return m.live(ctx, app, now, wantSpent)
	}
	spent, _ := strconv.ParseInt(spentCmd.Val(), 10, 64)
	return used, spent, nil
}

// seedPeriod puts the store's counts of the period (with this process's
// not yet recorded) into Redis, replacing what increments made of the hash
// before it was seeded (while no cap needed it).
func (m *Meter) seedPeriod(ctx context.Context, app int64, now time.Time, key string) error {
	c, err := m.recorded(ctx, app, PeriodStart(now, m.cfg.CapResetDay))
	if err != nil {
		return err
	}
	pipe := m.deps.Redis.TxPipeline()
	pipe.HSet(ctx, key, fieldRead, c.PostsRead, fieldWritten, c.PostsWritten, fieldUsers, c.UsersRead, fieldSeeded, 1)
	pipe.Expire(ctx, key, periodKeyTTL)
	_, err = pipe.Exec(ctx)
	return wrapRedis("seed usage period", app, err)
}

func (m *Meter) seedSpent(ctx context.Context, app int64, key string) error {
	c, err := m.recorded(ctx, app, time.Time{})
	if err != nil {
		return err
	}
	return wrapRedis("seed credits spent", app, m.deps.Redis.SetNX(ctx, key, c.CreditsSpent, 0).Err())
}

// recorded is the store's usage since from plus what this process has not
// written there yet.
func (m *Meter) recorded(ctx context.Context, app int64, from time.Time) (storage.UsageCounts, error) {
	c, err := m.deps.Store.UsageSince(ctx, app, from)
	if err != nil {
		return c, fmt.Errorf("recorded usage of app %d: %w", app, err)
	}
	fromDay := from.Format(time.DateOnly)
	m.mu.Lock()
	for k, d := range m.pending {
		if k.app == app && k.day >= fromDay {
			c = c.Add(d)
		}
	}
	m.mu.Unlock()
	return c, nil
}

func wrapRedis(op string, app int64, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s of app %d: %w", op, app, err)
}

func asInt(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// appSettings is the app's caps and credits, cached for SettingsTTL.
func (m *Meter) appSettings(ctx context.Context, app int64, now time.Time) (storage.UsageSettings, error) {
	m.mu.Lock()
	c, ok := m.settings[app]
	m.mu.Unlock()
	if ok && now.Before(c.expires) {
		return c.s, nil
	}
	s, err := m.deps.Store.AppUsageSettings(ctx, app)
	if err != nil {
		return s, fmt.Errorf("usage settings of app %d: %w", app, err)
	}
	m.mu.Lock()
	m.settings[app] = cachedSettings{s: s, expires: now.Add(m.cfg.SettingsTTL)}
	m.mu.Unlock()
	return s, nil
}

// Run adds the counted usage to the store every FlushInterval until ctx
// ends, then once more.
func (m *Meter) Run(ctx context.Context) {
	t := time.NewTicker(m.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			if err := m.Flush(flushCtx); err != nil {
				m.deps.Logger.Error("usage not recorded at shutdown", "err", err)
			}
			return
		case <-t.C:
			if err := m.Flush(ctx); err != nil {
				m.deps.Logger.Warn("usage not recorded yet; retried", "err", err)
			}
		}
	}
}

// Flush adds the counts not yet recorded to the store; on failure they are
// kept for the next one.
func (m *Meter) Flush(ctx context.Context) error {
	m.mu.Lock()
	batch := m.pending
	m.pending = map[dayKey]storage.UsageCounts{}
	m.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	days := make([]storage.UsageDay, 0, len(batch))
	for k, c := range batch {
		day, _ := time.Parse(time.DateOnly, k.day)
		days = append(days, storage.UsageDay{AppID: k.app, Day: day, UsageCounts: c})
	}
	if err := m.deps.Store.AddUsage(ctx, days); err != nil {
		m.mu.Lock()
		for k, c := range batch {
			m.pending[k] = m.pending[k].Add(c)
		}
		m.mu.Unlock()
		return fmt.Errorf("record usage: %w", err)
	}
	return nil
}

// PeriodStart is the first day (midnight UTC) of the usage period holding
// now, periods starting on resetDay of each month.
func PeriodStart(now time.Time, resetDay int) time.Time {
	now = now.UTC()
	start := time.Date(now.Year(), now.Month(), resetDay, 0, 0, 0, 0, time.UTC)
	if now.Before(start) {
		start = start.AddDate(0, -1, 0)
	}
	return start
}

// meteredWriter counts the body WriteJSON hands it (httpx.BodyObserver).
type meteredWriter struct {
	http.ResponseWriter
	res    Resource
	c      Counts
	status int
}

// ObserveJSON implements httpx.BodyObserver.
func (w *meteredWriter) ObserveJSON(status int, body any) {
	w.status = status
	if status < 200 || status > 299 {
		return
	}
	w.c = countBody(body, w.res)
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *meteredWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// counts is the usage of the response served.
func (w *meteredWriter) counts() storage.UsageCounts {
	c := storage.UsageCounts{PostsRead: int64(w.c.Posts), UsersRead: int64(w.c.Users)}
	if w.res == PostCreate && w.status == http.StatusCreated {
		c = storage.UsageCounts{PostsWritten: 1}
	}
	return c
}
