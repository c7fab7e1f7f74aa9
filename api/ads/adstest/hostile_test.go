package adstest_test

// Hostile probes of the ads API: malformed text, odd path ids, hostile
// numbers, cursors of other queries, concurrent writes. Every request must
// get an ads envelope (never a 5xx, never Problem JSON), and a refused
// request must change nothing. Run with -run Hostile.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// hostileEnv is an account with one of every entity, and a second user
// with an account of their own.
type hostileEnv struct {
	s              *adstest.Server
	alice, mallory *adstest.Caller
	acct           string
	other          string
	ids            map[string]string // path value name -> id of alice's account
	otherIDs       map[string]string // path value name -> id of mallory's account
}

func sqlID(t testing.TB, conn *pgxpool.Pool, q string, args ...any) string {
	t.Helper()
	var id string
	if err := conn.QueryRow(t.Context(), q, args...).Scan(&id); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return id
}

func sqlInt(t testing.TB, conn *pgxpool.Pool, q string, args ...any) int {
	t.Helper()
	var n int
	if err := conn.QueryRow(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// populate gives the account n of every entity and returns the ids of the
// first of each, by path value name.
func populate(t testing.TB, s *adstest.Server, conn *pgxpool.Pool, owner *adstest.Caller, acct string, n int) map[string]string {
	t.Helper()
	ids := map[string]string{"account_id": acct, "curated_category_id": "9fg8gmz96qdg", "as_user_id": strconv.FormatInt(owner.User.ID, 10)}
	var lis []string
	cats := []string{"9fg8gmz96qdg", "9ddrgesiap6o", "79033sdoi0mi", "y4yj4e866vt3", "q3guke3h8j2b"}
	for i := 0; i < n; i++ {
		fi, camp, li := factory.AdsChain(t, s.DB, acct)
		promotedPost := factory.Post(t, s.DB, &factory.PostOpts{Author: owner.User})
		pt := sqlID(t, conn, `INSERT INTO promoted_tweets (account_id, line_item_id, tweet_id) VALUES ($1, $2, $3) RETURNING id`, acct, li, promotedPost.ID)
		tc := sqlID(t, conn, `INSERT INTO targeting_criteria (account_id, line_item_id, targeting_type, targeting_value) VALUES ($1, $2, 'LOCATION', $3) RETURNING id`, acct, li, fmt.Sprintf("v%d", i))
		link := sqlID(t, conn, `INSERT INTO line_item_curated_categories (account_id, line_item_id, curated_category_id) VALUES ($1, $2, $3) RETURNING id`, acct, li, cats[i%len(cats)])
		am := sqlID(t, conn, `INSERT INTO account_media (account_id, creative_type, media_url) VALUES ($1, 'BANNER', 'https://x/y.png') RETURNING id`, acct)
		mc := sqlID(t, conn, `INSERT INTO media_creatives (account_id, line_item_id, account_media_id) VALUES ($1, $2, $3) RETURNING id`, acct, li, am)
		m := processedUpload(t, s, owner.User)
		owner.Post(t, "/12/accounts/"+acct+"/media_library", url.Values{"media_key": {m.Key}, "name": {fmt.Sprintf("lib %d", i)}}).Status(t, http.StatusOK)
		key := m.Key
		lis = append(lis, li)
		app := sqlID(t, conn, `INSERT INTO account_apps (account_id, app_store_identifier, os_type) VALUES ($1, $2, 'Android') RETURNING id`, acct, fmt.Sprintf("com.x%d", i))
		if i == 0 {
			ids["free_line_item_id"] = factory.LineItem(t, s.DB, acct, camp)
			// a live post of the owner, not promoted yet
			ids["tweet_id"] = strconv.FormatInt(factory.Post(t, s.DB, &factory.PostOpts{Author: owner.User}).ID, 10)
			for h := 0; h < n+1; h++ {
				sqlID(t, conn, `INSERT INTO account_history (account_id, entity_type, entity_id, change_type, change_time, changes) VALUES ($1, 'LINE_ITEM', $2, 'UPDATE', $3, '{"entity_status":{"old":"ACTIVE","new":"PAUSED"}}') RETURNING id::text`,
					acct, li, time.Date(2024, 1, 1, 10, h, 0, 0, time.UTC))
			}
			ids["funding_instrument_id"], ids["campaign_id"], ids["line_item_id"] = fi, camp, li
			ids["promoted_tweet_id"], ids["targeting_criterion_id"], ids["line_item_curated_category_id"] = pt, tc, link
			ids["account_media_id"], ids["media_creative_id"], ids["media_key"], ids["app"] = am, mc, key, app
		}
	}
	ids["line_item_ids"] = strings.Join(lis, ",")
	populateAudiences(t, s, conn, acct, lis, ids, n)
	populateCatalog(t, s, conn, owner, acct, ids, n)
	populateCards(t, conn, acct, ids, n)
	return ids
}

// populateAudiences gives the account n custom audiences, n grants of the
// first to accounts of its business, criteria targeting it on each line
// item, and do-not-reach lists (one live, n-1 deleted: one live per
// account).
func populateAudiences(t testing.TB, s *adstest.Server, conn *pgxpool.Pool, acct string, lis []string, ids map[string]string, n int) {
	t.Helper()
	var business string
	if err := conn.QueryRow(t.Context(), `SELECT business_id FROM ad_accounts WHERE id = $1`, acct).Scan(&business); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		aud := sqlID(t, conn, `INSERT INTO custom_audiences (owner_account_id, name) VALUES ($1, $2) RETURNING id`, acct, fmt.Sprintf("audience %d", i))
		if i == 0 {
			ids["custom_audience_id"], ids["tailored_audience_id"] = aud, aud
		}
		peer := factory.AdAccount(t, s.DB, nil).ID
		sqlID(t, conn, `UPDATE ad_accounts SET business_id = $2 WHERE id = $1 RETURNING id`, peer, business)
		grant := sqlID(t, conn, `INSERT INTO custom_audience_permissions (custom_audience_id, granted_account_id, permission_level)
			VALUES ($1, $2, 'READ_ONLY') RETURNING id`, ids["custom_audience_id"], peer)
		sqlID(t, conn, `INSERT INTO targeting_criteria (account_id, line_item_id, targeting_type, targeting_value) VALUES ($1, $2, 'CUSTOM_AUDIENCE', $3) RETURNING id`,
			acct, lis[i], ids["custom_audience_id"])
		list := sqlID(t, conn, `INSERT INTO do_not_reach_lists (account_id, description, deleted)
			VALUES ($1, $2, $3 OR EXISTS (SELECT 1 FROM do_not_reach_lists WHERE account_id = $1 AND NOT deleted)) RETURNING id`,
			acct, fmt.Sprintf("list %d", i), i > 0)
		if i == 0 {
			ids["tailored_audience_permission_id"], ids["do_not_reach_list_id"] = grant, list
		}
	}
}

// populateCatalog gives the owner's account the CATALOGS feature and the
// owner a catalog of n products.
func populateCatalog(t testing.TB, s *adstest.Server, conn *pgxpool.Pool, owner *adstest.Caller, acct string, ids map[string]string, n int) {
	t.Helper()
	sqlID(t, conn, `INSERT INTO ad_account_features (account_id, feature) VALUES ($1, 'CATALOGS')
		ON CONFLICT (account_id, feature) DO UPDATE SET feature = EXCLUDED.feature RETURNING feature`, acct)
	catalog := sqlID(t, conn, `INSERT INTO product_catalogs (user_id, name, sandbox)
		VALUES ($1, 'catalog', (SELECT sandbox FROM ad_accounts WHERE id = $2))
		ON CONFLICT (user_id, sandbox) DO UPDATE SET name = EXCLUDED.name RETURNING id`, owner.User.ID, acct)
	ids["product_catalog_id"] = catalog
	for i := 0; i < n; i++ {
		sku := fmt.Sprintf("sku-%d-%s", i, storagetest.RandomSuffix(4))
		sqlID(t, conn, `INSERT INTO products (catalog_id, id, fields, status) VALUES ($1, $2, $3, 'PENDING') RETURNING id`,
			catalog, sku, fmt.Sprintf(`{"id": %q, "title": "product %d"}`, sku, i))
	}
}

// processedUpload is an upload of owner driven to succeeded (an image).
func processedUpload(t testing.TB, s *adstest.Server, owner storage.User) storage.Media {
	t.Helper()
	ctx, at := t.Context(), time.Now().UTC()
	m := factory.Media(t, s.DB, &factory.MediaOpts{Owner: &owner})
	if _, err := s.DB.AddMediaSegment(ctx, storage.MediaSegment{MediaID: m.ID, Key: "media/seg", Size: m.TotalBytes}, at); err != nil {
		t.Fatalf("add segment: %v", err)
	}
	if _, err := s.DB.FinalizeMedia(ctx, m.ID, at); err != nil {
		t.Fatalf("finalize: %v", err)
	}
	if _, err := s.DB.StartMediaProcessing(ctx, m.ID, at); err != nil {
		t.Fatalf("start: %v", err)
	}
	res := storage.MediaResult{Width: 1280, Height: 720, OutputKey: storage.MediaOutputKey(m.ID, "jpg"), PreviewKey: storage.MediaPreviewKey(m.ID)}
	if err := s.DB.CompleteMedia(ctx, m.ID, res, at); err != nil {
		t.Fatalf("complete: %v", err)
	}
	return m
}

func newHostileEnv(t *testing.T, n int) *hostileEnv {
	// with_total_count is limited to 200 requests a window: the walks need more
	s := adstest.New(t, adstest.Options{RateLimitScale: 50})
	e := &hostileEnv{s: s, alice: s.User(t, "alice"), mallory: s.User(t, "mallory")}
	e.acct = e.alice.Account(t).ID
	e.other = e.mallory.Account(t).ID
	e.alice.Account(t) // a second account each, so /12/accounts pages
	e.mallory.Account(t)
	conn := s.SQL()
	e.ids = populate(t, s, conn, e.alice, e.acct, n)
	e.otherIDs = populate(t, s, conn, e.mallory, e.other, n)
	return e
}

var pathValue = regexp.MustCompile(`\{([a-z_]+)\}`)

// fill replaces the path values of a route path with ids (override wins).
func fill(path string, ids map[string]string, override map[string]string) string {
	return pathValue.ReplaceAllStringFunc(path, func(m string) string {
		name := m[1 : len(m)-1]
		if v, ok := override[name]; ok {
			return v
		}
		if v, ok := ids[name]; ok {
			return url.PathEscape(v)
		}
		return "x1"
	})
}

// adsEnvelope checks the reply is no 5xx and, when an error, is the ads
// error envelope: errors[] with a code, and request.
func adsEnvelope(t *testing.T, what string, r adstest.Reply) bool {
	t.Helper()
	if r.Code >= 500 {
		t.Errorf("%s: status %d: %.400s", what, r.Code, r.Raw)
		return false
	}
	if strings.Contains(r.Header.Get("Content-Type"), "problem") {
		t.Errorf("%s: Problem JSON (%d): %.400s", what, r.Code, r.Raw)
		return false
	}
	if r.Code >= 400 {
		if r.FirstError().Code == "" {
			t.Errorf("%s: %d without an ads error: %.400s", what, r.Code, r.Raw)
			return false
		}
		if _, ok := r.Body["request"].(map[string]any); !ok {
			t.Errorf("%s: %d error without request: %.400s", what, r.Code, r.Raw)
			return false
		}
	}
	return true
}

// hostileTexts are values that no ads parameter takes: a text parameter
// refuses them as invalid text, any other as an invalid value.
var hostileTexts = []struct{ name, value string }{
	{"invalid UTF-8", "a\xffb"},
	{"lone continuation byte", "\x80"},
	{"NUL", "a\x00b"},
	{"only NUL", "\x00"},
	{"overlong encoding", "\xc0\xaf"},
	{"surrogate", "\xed\xa0\x80"},
}

// hostileOthers are values every parameter must answer without a 5xx.
var hostileOthers = []struct{ name, value string }{
	{"10k chars", strings.Repeat("a", 10000)},
	{"10k commas", strings.Repeat(",", 10000)},
	{"int64 overflow", "9223372036854775808"},
	{"huge negative", "-9223372036854775809"},
	{"negative", "-1"},
	{"zero", "0"},
	{"float", "1.5"},
	{"exponent", "1e3"},
	{"empty", ""},
	{"spaces", "   "},
	{"unicode", "ñ日本🎉"},
	{"sql", "' OR 1=1 --"},
	{"percent", "%"},
	{"far future time", "9999-12-31T23:00:00Z"},
	{"year zero time", "0000-01-01T00:00:00Z"},
	{"time offset", "2024-01-01T10:00:00+14:00"},
	{"sort desc", "created_at-desc"},
	{"id list", "a,b,,c"},
	{"201 ids", strings.TrimSuffix(strings.Repeat("x,", 201), ",")},
}

// TestHostileParamValues sends every parameter of every route, alone, with
// hostile values: no 5xx, the ads envelope, malformed text refused as
// INVALID_PARAMETER naming the parameter (never accepted), and nothing
// changed by refused writes.
func TestHostileParamValues(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	for _, rt := range e.s.Routes() {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		if method == http.MethodDelete || rt.Pattern == "POST /12/accounts" {
			continue
		}
		p := fill(path, e.ids, nil)
		for _, name := range rt.Query {
			for _, v := range hostileTexts {
				before := snapshot(t, conn, e.acct)
				what := fmt.Sprintf("%s %s=%s", rt.Pattern, name, v.name)
				r := e.alice.Do(t, method, p, url.Values{name: {v.value}})
				if !adsEnvelope(t, what, r) {
					continue
				}
				if r.Code < 400 {
					t.Errorf("%s: accepted with %d: %.300s", what, r.Code, r.Raw)
				} else if r.Code == 400 && r.FirstError().Parameter != name && r.FirstError().Code != "MISSING_PARAMETER" {
					t.Errorf("%s: refused naming %q: %.300s", what, r.FirstError().Parameter, r.Raw)
				}
				if after := snapshot(t, conn, e.acct); r.Code >= 400 && after != before {
					t.Errorf("%s: refused (%d) but the account changed", what, r.Code)
				}
			}
			for _, v := range hostileOthers {
				what := fmt.Sprintf("%s %s=%s", rt.Pattern, name, v.name)
				before := snapshot(t, conn, e.acct)
				r := e.alice.Do(t, method, p, url.Values{name: {v.value}})
				if !adsEnvelope(t, what, r) {
					continue
				}
				if after := snapshot(t, conn, e.acct); r.Code >= 400 && after != before {
					t.Errorf("%s: refused (%d) but the account changed", what, r.Code)
				}
			}
		}
	}
}

// snapshot is a digest of everything an account holds.
func snapshot(t testing.TB, conn *pgxpool.Pool, acct string) string {
	t.Helper()
	var out string
	err := conn.QueryRow(t.Context(), `SELECT concat_ws('|',
		(SELECT md5(string_agg(a::text, ',' ORDER BY a.id)) FROM ad_accounts a WHERE id = $1),
		(SELECT md5(string_agg(c::text, ',' ORDER BY c.id)) FROM campaigns c WHERE account_id = $1),
		(SELECT md5(string_agg(l::text, ',' ORDER BY l.id)) FROM line_items l WHERE account_id = $1),
		(SELECT md5(string_agg(p::text, ',' ORDER BY p.id)) FROM promoted_tweets p WHERE account_id = $1),
		(SELECT md5(string_agg(x::text, ',' ORDER BY x.id)) FROM targeting_criteria x WHERE account_id = $1),
		(SELECT md5(string_agg(x::text, ',' ORDER BY x.id)) FROM line_item_curated_categories x WHERE account_id = $1),
		(SELECT md5(string_agg(x::text, ',' ORDER BY x.id)) FROM account_media x WHERE account_id = $1),
		(SELECT md5(string_agg(x::text, ',' ORDER BY x.id)) FROM media_creatives x WHERE account_id = $1),
		(SELECT md5(string_agg(x::text, ',' ORDER BY x.media_key)) FROM media_library x WHERE account_id = $1),
		(SELECT count(*)::text FROM account_history WHERE account_id = $1))`, acct).Scan(&out)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return out
}

// hostileIDs are path values no entity has.
var hostileIDs = []struct{ name, value string }{
	{"invalid UTF-8", "%ff"},
	{"NUL", "a%00b"},
	{"encoded slash", "a%2Fb"},
	{"space", "a%20b"},
	{"unicode", "%C3%A9t%C3%A9"},
	{"10k chars", strings.Repeat("a", 10000)},
	{"int64 overflow", "9223372036854775808"},
	{"negative", "-1"},
	{"quote", "%27"},
	{"percent", "%25"},
}

// sandboxOnly are the routes that answer 403 ACTION_NOT_ALLOWED on the
// production listener (where these tests run) once the account is known.
var sandboxOnly = map[string]bool{
	"POST /12/accounts/{account_id}/funding_instruments":                           true,
	"DELETE /12/accounts/{account_id}/funding_instruments/{funding_instrument_id}": true,
}

// TestHostilePathIDs puts odd ids in every path value of every route: an
// account id the caller cannot use is 403 ACCOUNT_NOT_FOUND, any other
// entity id is a 404 *_NOT_FOUND (or ROUTE_NOT_FOUND when the mux cannot
// match it): never a 5xx, never a change.
func TestHostilePathIDs(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	for _, rt := range e.s.Routes() {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		for _, m := range pathValue.FindAllStringSubmatch(path, -1) {
			name := m[1]
			for _, v := range hostileIDs {
				what := fmt.Sprintf("%s %s=%s", rt.Pattern, name, v.name)
				before := snapshot(t, conn, e.acct)
				r := e.alice.Do(t, method, fill(path, e.ids, map[string]string{name: v.value}), nil)
				if !adsEnvelope(t, what, r) {
					continue
				}
				code := r.FirstError().Code
				switch {
				case name == "account_id" && rt.Pattern == "DELETE /12/accounts/{account_id}":
				case sandboxOnly[rt.Pattern] && r.Code == 403 && code == "ACTION_NOT_ALLOWED":
				case name == "account_id":
					if r.Code != 403 || code != "ACCOUNT_NOT_FOUND" {
						t.Errorf("%s: %d %s, want 403 ACCOUNT_NOT_FOUND: %.300s", what, r.Code, code, r.Raw)
					}
				case r.Code == 404 && (strings.HasSuffix(code, "NOT_FOUND")):
				case r.Code == 400 && method != http.MethodGet && method != http.MethodDelete:
					// POST/PUT with no body may be refused for missing params first
				default:
					t.Errorf("%s: %d %s, want 404 *_NOT_FOUND: %.300s", what, r.Code, code, r.Raw)
				}
				if snapshot(t, conn, e.acct) != before {
					t.Errorf("%s: the account changed", what)
				}
			}
		}
	}
}

// TestHostileOtherAccountsEntities: an id of another account's entity, in
// the path or as a parameter, answers like a missing one and changes
// nothing in either account.
func TestHostileOtherAccountsEntities(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	for _, rt := range e.s.Routes() {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		for _, m := range pathValue.FindAllStringSubmatch(path, -1) {
			name := m[1]
			if name == "account_id" || name == "curated_category_id" || sandboxOnly[rt.Pattern] {
				continue
			}
			what := fmt.Sprintf("%s %s of another account", rt.Pattern, name)
			before, beforeOther := snapshot(t, conn, e.acct), snapshot(t, conn, e.other)
			r := e.alice.Do(t, method, fill(path, e.ids, map[string]string{name: e.otherIDs[name]}), nil)
			if !adsEnvelope(t, what, r) {
				continue
			}
			if r.Code != 404 && !(r.Code == 400 && method == http.MethodPost) {
				t.Errorf("%s: %d, want 404: %.300s", what, r.Code, r.Raw)
			}
			if strings.Contains(r.Raw, `"data"`) {
				t.Errorf("%s: data of another account: %.300s", what, r.Raw)
			}
			if snapshot(t, conn, e.acct) != before || snapshot(t, conn, e.other) != beforeOther {
				t.Errorf("%s: data changed", what)
			}
		}
		// id parameters naming the other account's entities
		for _, name := range rt.Query {
			if !strings.HasSuffix(name, "_id") && !strings.HasSuffix(name, "_ids") {
				continue
			}
			key := strings.TrimSuffix(name, "s")
			if key == "promoted_tweet_id" || key == "targeting_criterion_id" || key == "media_creative_id" ||
				key == "account_media_id" || key == "line_item_id" || key == "campaign_id" || key == "funding_instrument_id" {
				oid := e.otherIDs[key]
				what := fmt.Sprintf("%s %s=<other account's>", rt.Pattern, name)
				before, beforeOther := snapshot(t, conn, e.acct), snapshot(t, conn, e.other)
				r := e.alice.Do(t, method, fill(path, e.ids, nil), url.Values{name: {oid}})
				if !adsEnvelope(t, what, r) {
					continue
				}
				if strings.Contains(r.Raw, `"id":"`+oid+`"`) {
					t.Errorf("%s: returned the other account's entity: %.300s", what, r.Raw)
				}
				if snapshot(t, conn, e.other) != beforeOther {
					t.Errorf("%s: the other account changed", what)
				}
				if r.Code >= 400 && snapshot(t, conn, e.acct) != before {
					t.Errorf("%s: refused but changed", what)
				}
			}
		}
	}
}

var sortableRe = regexp.MustCompile(`one of \[([^\]]*)\]`)

// listRoutes are the GET list routes (their Query has "cursor") and extra
// parameters they need.
func listRoutes(e *hostileEnv) map[string]url.Values {
	out := map[string]url.Values{}
	for _, rt := range e.s.Routes() {
		method, _, _ := strings.Cut(rt.Pattern, " ")
		if method != http.MethodGet || !slices.Contains(rt.Query, "cursor") {
			continue
		}
		out[rt.Pattern] = requiredParams(rt.Pattern, e.ids)
	}
	return out
}

func merge(a url.Values, kv ...string) url.Values {
	out := url.Values{}
	for k, v := range a {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Set(kv[i], kv[i+1])
	}
	return out
}

// TestHostileSortCursorWalk walks every list, sorted by every attribute it
// lists in both directions (and unsorted), one row a page: no 5xx, no row
// twice, every row seen (total_count), and with_deleted too.
func TestHostileSortCursorWalk(t *testing.T) {
	e := newHostileEnv(t, 4)
	lists := listRoutes(e)
	for pattern, extra := range lists {
		path := fill(strings.TrimPrefix(pattern, "GET "), e.ids, nil)
		orders := []string{""}
		rt := findRoute(e.s, pattern)
		if slices.Contains(rt.Query, "sort_by") {
			r := e.alice.Get(t, path, merge(extra, "sort_by", "zzz-asc"))
			r.Fails(t, 400, "INVALID_PARAMETER", "sort_by")
			m := sortableRe.FindStringSubmatch(r.FirstError().Message)
			if m == nil {
				t.Fatalf("%s: sort_by error lists no attributes: %s", pattern, r.Raw)
			}
			for _, a := range strings.Split(m[1], ", ") {
				orders = append(orders, a+"-asc", a+"-desc")
			}
		}
		for _, order := range orders {
			for _, withDeleted := range []string{"", "true"} {
				q := merge(extra)
				if order != "" {
					q.Set("sort_by", order)
				}
				if withDeleted != "" {
					if !slices.Contains(rt.Query, "with_deleted") {
						continue
					}
					q.Set("with_deleted", withDeleted)
				}
				walk(t, e.alice, pattern, path, q, slices.Contains(rt.Query, "with_total_count"))
			}
		}
	}
}

func findRoute(s *adstest.Server, pattern string) struct{ Query []string } {
	for _, rt := range s.Routes() {
		if rt.Pattern == pattern {
			return struct{ Query []string }{rt.Query}
		}
	}
	return struct{ Query []string }{}
}

func itemKey(it map[string]any) string {
	for _, k := range []string{"id", "media_key"} {
		if v, ok := it[k].(string); ok {
			return v
		}
	}
	b, _ := json.Marshal(it)
	return string(b)
}

// walk pages through q one row at a time and checks every row once.
func walk(t *testing.T, c *adstest.Caller, pattern, path string, q url.Values, total bool) {
	t.Helper()
	what := pattern + " " + q.Encode()
	want := -1
	if total {
		r := c.Get(t, path, merge(q, "with_total_count", "true", "count", "1000"))
		if !adsEnvelope(t, what+" total", r) || r.Code != 200 {
			t.Errorf("%s with_total_count: %d %.300s", what, r.Code, r.Raw)
			return
		}
		n, _ := r.Body["total_count"].(float64)
		want = int(n)
		if len(r.List(t)) != want {
			t.Errorf("%s: total_count %d, %d rows", what, want, len(r.List(t)))
		}
	}
	seen := map[string]bool{}
	cursor := ""
	for page := 0; page < 100; page++ {
		pq := merge(q, "count", "1")
		if cursor != "" {
			pq.Set("cursor", cursor)
		}
		r := c.Get(t, path, pq)
		if !adsEnvelope(t, fmt.Sprintf("%s page %d", what, page), r) {
			return
		}
		if r.Code != 200 {
			t.Errorf("%s page %d: %d %.300s", what, page, r.Code, r.Raw)
			return
		}
		for _, it := range r.List(t) {
			k := itemKey(it)
			if seen[k] {
				t.Errorf("%s: row %s seen twice", what, k)
			}
			seen[k] = true
		}
		if cursor = r.NextCursor(); cursor == "" {
			break
		}
	}
	if want >= 0 && len(seen) != want {
		t.Errorf("%s: walk saw %d rows, total_count %d", what, len(seen), want)
	}
}

// TestHostileCursors: a tampered cursor, one of another list, another
// account, another sort or other filters is 400 INVALID_PARAMETER naming
// cursor; with_total_count with cursor is EXCLUSIVE_PARAMETERS.
func TestHostileCursors(t *testing.T) {
	e := newHostileEnv(t, 3)
	lists := listRoutes(e)
	cursors := map[string]string{}
	otherCursors := map[string]string{}
	for pattern, extra := range lists {
		path := fill(strings.TrimPrefix(pattern, "GET "), e.ids, nil)
		r := e.alice.Get(t, path, merge(extra, "count", "1"))
		if !adsEnvelope(t, pattern, r) || r.NextCursor() == "" {
			t.Errorf("%s: no cursor: %d %.300s", pattern, r.Code, r.Raw)
			continue
		}
		cursors[pattern] = r.NextCursor()
		otherExtra := requiredParams(pattern, e.otherIDs)
		r = e.mallory.Get(t, fill(strings.TrimPrefix(pattern, "GET "), e.otherIDs, nil), merge(otherExtra, "count", "1"))
		if c := r.NextCursor(); c != "" && strings.Contains(pattern, "{account_id}") {
			otherCursors[pattern] = c
		}
	}
	for pattern, extra := range lists {
		path := fill(strings.TrimPrefix(pattern, "GET "), e.ids, nil)
		own := cursors[pattern]
		if own == "" {
			continue
		}
		payload, mac, _ := strings.Cut(own, ".")
		bad := map[string]string{
			"flipped mac":       payload + "." + flip(mac),
			"flipped payload":   flip(payload) + "." + mac,
			"no mac":            payload,
			"only dot":          ".",
			"invalid UTF-8":     own + "\xff",
			"NUL":               own + "\x00",
			"10k":               strings.Repeat("A", 10000),
			"other account":     otherCursors[pattern], // (GET /12/accounts pages the caller's accounts: no account to bind)
			"whitespace padded": " " + own + " ",
		}
		for other, c := range cursors {
			if other != pattern {
				bad["from "+other] = c
				break
			}
		}
		for name, c := range bad {
			if c == "" {
				continue
			}
			r := e.alice.Get(t, path, merge(extra, "cursor", c))
			what := fmt.Sprintf("%s cursor %s", pattern, name)
			if adsEnvelope(t, what, r) && (r.Code != 400 || r.FirstError().Code != "INVALID_PARAMETER" || r.FirstError().Parameter != "cursor") {
				t.Errorf("%s: %d %s %q, want 400 INVALID_PARAMETER cursor: %.300s", what, r.Code, r.FirstError().Code, r.FirstError().Parameter, r.Raw)
			}
		}
		rt := findRoute(e.s, pattern)
		if slices.Contains(rt.Query, "sort_by") {
			r := e.alice.Get(t, path, merge(extra, "cursor", own, "sort_by", "created_at-desc"))
			if adsEnvelope(t, pattern+" other sort", r) && (r.Code != 400 || r.FirstError().Parameter != "cursor") {
				t.Errorf("%s: cursor with another sort: %d %.300s", pattern, r.Code, r.Raw)
			}
		}
		if slices.Contains(rt.Query, "with_deleted") {
			flipped := "true"
			if extra.Get("with_deleted") == "true" {
				flipped = "false"
			}
			r := e.alice.Get(t, path, merge(extra, "cursor", own, "with_deleted", flipped))
			if adsEnvelope(t, pattern+" other filter", r) && (r.Code != 400 || r.FirstError().Parameter != "cursor") {
				t.Errorf("%s: cursor with other filters: %d %.300s", pattern, r.Code, r.Raw)
			}
		}
		if slices.Contains(rt.Query, "with_total_count") {
			r := e.alice.Get(t, path, merge(extra, "cursor", own, "with_total_count", "true"))
			if adsEnvelope(t, pattern+" exclusive", r) && (r.Code != 400 || r.FirstError().Code != "EXCLUSIVE_PARAMETERS") {
				t.Errorf("%s: cursor with with_total_count: %d %.300s", pattern, r.Code, r.Raw)
			}
			// with_total_count=false with a cursor is allowed
			r = e.alice.Get(t, path, merge(extra, "cursor", own, "with_total_count", "false"))
			if adsEnvelope(t, pattern+" total false", r) && r.Code != 200 {
				t.Errorf("%s: cursor with with_total_count=false: %d %.300s", pattern, r.Code, r.Raw)
			}
		}
		// count may change between pages
		r := e.alice.Get(t, path, merge(extra, "cursor", own, "count", "2"))
		if adsEnvelope(t, pattern+" count change", r) && r.Code != 200 {
			t.Errorf("%s: count change refused: %d %.300s", pattern, r.Code, r.Raw)
		}
	}
}

func flip(s string) string {
	if s == "" {
		return "A"
	}
	b := []byte(s)
	if b[0] == 'A' {
		b[0] = 'B'
	} else {
		b[0] = 'A'
	}
	return string(b)
}

// TestHostileConcurrentDeletes: 20 DELETEs of one entity at once: exactly
// one 200, the others 404 with the entity's code, and the history written
// once.
func TestHostileConcurrentDeletes(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	cases := []struct {
		route, idName, code, entityType string
	}{
		{"/12/accounts/{account_id}/promoted_tweets/{promoted_tweet_id}", "promoted_tweet_id", "PROMOTED_TWEET_NOT_FOUND", "PROMOTED_TWEET"},
		{"/12/accounts/{account_id}/targeting_criteria/{targeting_criterion_id}", "targeting_criterion_id", "TARGETING_CRITERION_NOT_FOUND", "TARGETING_CRITERIA"},
		{"/12/accounts/{account_id}/line_item_curated_categories/{line_item_curated_category_id}", "line_item_curated_category_id", "", ""},
		{"/12/accounts/{account_id}/account_media/{account_media_id}", "account_media_id", "ACCOUNT_MEDIA_NOT_FOUND", ""},
		{"/12/accounts/{account_id}/media_creatives/{media_creative_id}", "media_creative_id", "MEDIA_CREATIVE_NOT_FOUND", ""},
		{"/12/accounts/{account_id}/media_library/{media_key}", "media_key", "MEDIA_NOT_FOUND", ""},
		{"/12/accounts/{account_id}/line_items/{line_item_id}", "line_item_id", "LINE_ITEM_NOT_FOUND", "LINE_ITEM"},
		{"/12/accounts/{account_id}/campaigns/{campaign_id}", "campaign_id", "CAMPAIGN_NOT_FOUND", "CAMPAIGN"},
	}
	for _, tc := range cases {
		t.Run(tc.idName, func(t *testing.T) {
			path := fill(tc.route, e.ids, nil)
			var mu sync.Mutex
			codes := map[int]int{}
			errCodes := map[string]int{}
			var wg sync.WaitGroup
			for i := 0; i < 20; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := e.alice.Delete(t, path, nil)
					mu.Lock()
					defer mu.Unlock()
					codes[r.Code]++
					errCodes[r.FirstError().Code]++
					if r.Code >= 500 {
						t.Errorf("DELETE %s: %d %.300s", path, r.Code, r.Raw)
					}
				}()
			}
			wg.Wait()
			if codes[200] != 1 || codes[404] != 19 {
				t.Errorf("DELETE %s x20: statuses %v (codes %v), want one 200 and 19 404", path, codes, errCodes)
			}
			if tc.code != "" && errCodes[tc.code] != 19 {
				t.Errorf("DELETE %s x20: error codes %v, want 19 %s", path, errCodes, tc.code)
			}
			if tc.entityType != "" {
				n := sqlInt(t, conn, `SELECT count(*) FROM account_history WHERE entity_id = $1 AND change_type = 'DELETE'`, e.ids[tc.idName])
				if n != 1 {
					t.Errorf("DELETE %s x20: %d DELETE history rows, want 1", path, n)
				}
			}
		})
	}
}

// TestHostileConcurrentUpdates: 20 PUTs of one line item and one campaign
// at once, each another name: each success has exactly one UPDATE history
// entry, and the entity ends with the name of the last entry written.
func TestHostileConcurrentUpdates(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	for _, tc := range []struct{ route, idName string }{
		{"/12/accounts/{account_id}/line_items/{line_item_id}", "line_item_id"},
		{"/12/accounts/{account_id}/campaigns/{campaign_id}", "campaign_id"},
	} {
		path := fill(tc.route, e.ids, nil)
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for i := 0; i < 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.alice.Put(t, path, url.Values{"name": {fmt.Sprintf("name %02d", i)}})
				mu.Lock()
				defer mu.Unlock()
				if r.Code == 200 {
					ok++
				} else {
					t.Errorf("PUT %s: %d %.300s", path, r.Code, r.Raw)
				}
			}()
		}
		wg.Wait()
		id := e.ids[tc.idName]
		n := sqlInt(t, conn, `SELECT count(*) FROM account_history WHERE entity_id = $1 AND change_type = 'UPDATE' AND changes ? 'name'`, id)
		if n != ok {
			t.Errorf("PUT %s x20: %d successes, %d UPDATE history rows", path, ok, n)
		}
		// the UPDATE entries chain: each old name is the new name of exactly
		// one earlier entry (or the original), so no update was lost, and the
		// entity ends with the one new name nobody overwrote
		rows, err := conn.Query(t.Context(), `SELECT changes->'name'->>'old', changes->'name'->>'new' FROM account_history WHERE entity_id = $1 AND change_type = 'UPDATE' AND changes ? 'name'`, id)
		if err != nil {
			t.Fatal(err)
		}
		olds, news := map[string]int{}, map[string]bool{}
		for rows.Next() {
			var o, nw *string
			if err := rows.Scan(&o, &nw); err != nil {
				t.Fatal(err)
			}
			if o == nil || nw == nil {
				t.Errorf("PUT %s: UPDATE entry without name change", path)
				continue
			}
			olds[*o]++
			news[*nw] = true
		}
		rows.Close()
		for o, k := range olds {
			if k > 1 {
				t.Errorf("PUT %s x20: %d UPDATE entries changed the name from %q (lost updates)", path, k, o)
			}
		}
		got, _ := e.alice.Get(t, path, nil).Data(t)["name"].(string)
		if !news[got] || olds[got] > 0 {
			t.Errorf("PUT %s x20: final name %q is not the last entry's new name (olds %v)", path, got, olds)
		}
	}
}

// TestHostileBodies: JSON, multipart and oversized bodies on form
// endpoints, and bodies where none is taken.
func TestHostileBodies(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	for _, rt := range e.s.Routes() {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		p := fill(path, e.ids, nil)
		if method != http.MethodPost && method != http.MethodPut || slices.Contains(rt.Body.Types, "application/json") {
			continue // the JSON batch endpoints: their own bad-body tables
		}
		before := snapshot(t, conn, e.acct)
		r := e.alice.DoJSON(t, method, p, map[string]any{"name": "x"})
		if adsEnvelope(t, rt.Pattern+" JSON", r) && (r.Code != 415 || r.FirstError().Code != "INVALID_PARAMETER") {
			t.Errorf("%s JSON body: %d %s, want 415 INVALID_PARAMETER: %.300s", rt.Pattern, r.Code, r.FirstError().Code, r.Raw)
		}
		big := url.Values{"name": {strings.Repeat("a", 70<<10)}}
		r = e.alice.Do(t, method, p, big)
		if adsEnvelope(t, rt.Pattern+" big", r) && (r.Code != 413 || r.FirstError().Code != "INVALID_PARAMETER") {
			t.Errorf("%s 70KiB form: %d %s, want 413 INVALID_PARAMETER: %.300s", rt.Pattern, r.Code, r.FirstError().Code, r.Raw)
		}
		// query and form both
		if len(rt.Query) > 0 {
			n := rt.Query[0]
			r = e.alice.Do(t, method, p+"?"+n+"=a", url.Values{n: {"b"}})
			if adsEnvelope(t, rt.Pattern+" query+form", r) && (r.Code != 400 || r.FirstError().Parameter != n) {
				t.Errorf("%s %s in query and form: %d %q: %.300s", rt.Pattern, n, r.Code, r.FirstError().Parameter, r.Raw)
			}
		}
		r = e.alice.Do(t, method, p, url.Values{"zz_unknown": {"1"}})
		if adsEnvelope(t, rt.Pattern+" unknown", r) && (r.Code != 400 || r.FirstError().Parameter != "zz_unknown") {
			t.Errorf("%s unknown form param: %d %q: %.300s", rt.Pattern, r.Code, r.FirstError().Parameter, r.Raw)
		}
		if snapshot(t, conn, e.acct) != before {
			t.Errorf("%s: refused bodies changed the account", rt.Pattern)
		}
	}
}

// requiredParams are the parameters a route needs to succeed (ids of the
// account populate made).
func requiredParams(pattern string, ids map[string]string) url.Values {
	switch pattern {
	case "GET /12/accounts/{account_id}/account_history":
		return url.Values{"entity_type": {"LINE_ITEM"}, "entity_id": {ids["line_item_id"]},
			"start_time": {"2024-01-01T00:00:00Z"}, "end_time": {"2024-01-02T00:00:00Z"}}
	case "GET /12/accounts/{account_id}/tweets":
		return url.Values{"tweet_type": {"PUBLISHED"}, "timeline_type": {"ALL"}}
	case "POST /12/accounts/{account_id}/tweet":
		return url.Values{"as_user_id": {ids["as_user_id"]}, "text": {"hello"}}
	case "GET /12/accounts/{account_id}/curated_categories":
		return url.Values{"country_codes": {"US"}}
	case "GET /12/accounts/{account_id}/do_not_reach_lists":
		return url.Values{"with_deleted": {"true"}}
	case "GET /12/accounts/{account_id}/targeting_criteria":
		return url.Values{"line_item_ids": {ids["line_item_ids"]}}
	case "POST /12/accounts/{account_id}/campaigns":
		return url.Values{"funding_instrument_id": {ids["funding_instrument_id"]}, "name": {"c"}, "daily_budget_amount_local_micro": {"140000000"}}
	case "POST /12/accounts/{account_id}/line_items":
		return url.Values{"campaign_id": {ids["campaign_id"]}, "objective": {"ENGAGEMENTS"}, "product_type": {"PROMOTED_TWEETS"}, "placements": {"ALL_ON_SERVICE"}}
	case "POST /12/accounts/{account_id}/targeting_criteria":
		return url.Values{"line_item_id": {ids["line_item_id"]}, "targeting_type": {"BROAD_KEYWORD"}, "targeting_value": {"technology"}}
	case "POST /12/accounts/{account_id}/promoted_tweets":
		return url.Values{"line_item_id": {ids["line_item_id"]}, "tweet_ids": {ids["tweet_id"]}}
	case "POST /12/accounts/{account_id}/media_creatives":
		return url.Values{"line_item_id": {ids["line_item_id"]}, "account_media_id": {ids["account_media_id"]}, "landing_url": {"https://example.com"}}
	case "POST /12/accounts/{account_id}/line_item_curated_categories":
		return url.Values{"line_item_id": {ids["free_line_item_id"]}, "curated_category_id": {"0u13cjjy4rzd"}}
	}
	return url.Values{}
}

// TestHostileParamsOnValidRequests sends each route's required parameters
// (a request that succeeds) with one parameter at a time replaced by a
// hostile value, so the value reaches the handler's rules and the store:
// no 5xx, the ads envelope, malformed text refused naming the parameter,
// and nothing changed by a refused request.
func TestHostileParamsOnValidRequests(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	for _, rt := range e.s.Routes() {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		base := requiredParams(rt.Pattern, e.ids)
		if len(base) == 0 {
			continue
		}
		p := fill(path, e.ids, nil)
		if r := e.alice.Do(t, method, p, base); r.Code != 200 {
			t.Errorf("%s: the valid request fails: %d %.300s", rt.Pattern, r.Code, r.Raw)
			continue
		}
		for _, name := range rt.Query {
			for _, v := range append(append([]struct{ name, value string }{}, hostileTexts...), hostileOthers...) {
				if name == "cursor" || name == "with_total_count" {
					continue
				}
				before := snapshot(t, conn, e.acct)
				what := fmt.Sprintf("%s %s=%s (valid otherwise)", rt.Pattern, name, v.name)
				r := e.alice.Do(t, method, p, merge(base, name, v.value))
				if !adsEnvelope(t, what, r) {
					continue
				}
				text := slices.Contains(hostileTexts, v)
				if text && r.Code < 400 {
					t.Errorf("%s: accepted with %d: %.300s", what, r.Code, r.Raw)
				}
				if text && r.Code == 400 && r.FirstError().Parameter != name {
					t.Errorf("%s: refused naming %q: %.300s", what, r.FirstError().Parameter, r.Raw)
				}
				if r.Code >= 400 && snapshot(t, conn, e.acct) != before {
					t.Errorf("%s: refused (%d) but the account changed", what, r.Code)
				}
			}
		}
	}
}

// TestHostileForeignAndDeletedReferences sends each route's valid request
// with one id parameter replaced by the id of another account's entity, or
// of a deleted entity of the account: 404 with the entity's code naming the
// parameter, and neither account changed.
func TestHostileForeignAndDeletedReferences(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	// deleted entities of alice's account
	gone := populate(t, e.s, conn, e.alice, e.acct, 1)
	for _, d := range []string{
		"/12/accounts/{account_id}/media_creatives/{media_creative_id}",
		"/12/accounts/{account_id}/account_media/{account_media_id}",
		"/12/accounts/{account_id}/line_items/{line_item_id}",
		"/12/accounts/{account_id}/campaigns/{campaign_id}",
	} {
		e.alice.Delete(t, fill(d, gone, nil), nil).Status(t, http.StatusOK)
	}
	conn.Exec(t.Context(), `UPDATE funding_instruments SET deleted = true WHERE id = $1`, gone["funding_instrument_id"])
	conn.Exec(t.Context(), `UPDATE posts SET deleted_at = now() WHERE id = $1`, gone["tweet_id"])
	checked := 0
	codes := map[string]string{"line_item_id": "LINE_ITEM_NOT_FOUND", "line_item_ids": "LINE_ITEM_NOT_FOUND", "campaign_id": "CAMPAIGN_NOT_FOUND",
		"funding_instrument_id": "FUNDING_INSTRUMENT_NOT_FOUND", "account_media_id": "ACCOUNT_MEDIA_NOT_FOUND",
		"tweet_ids": "TWEET_NOT_FOUND"}
	for _, rt := range e.s.Routes() {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		base := requiredParams(rt.Pattern, e.ids)
		if method == http.MethodGet {
			continue
		}
		if method == http.MethodPut {
			base = url.Values{}
			if strings.Contains(path, "line_item_curated_categories") {
				base = url.Values{"line_item_id": {e.ids["line_item_id"]}}
			}
		}
		for name := range base {
			code, ok := codes[name]
			if !ok {
				continue
			}
			key := strings.TrimSuffix(name, "s")
			for _, which := range []struct{ what, id string }{{"another account's", e.otherIDs[key]}, {"deleted", gone[key]}} {
				if name == "line_item_id" && strings.Contains(path, "curated") && which.what == "another account's" {
					which.id = e.otherIDs["free_line_item_id"]
				}
				what := fmt.Sprintf("%s %s=%s", rt.Pattern, name, which.what)
				checked++
				before, beforeOther := snapshot(t, conn, e.acct), snapshot(t, conn, e.other)
				r := e.alice.Do(t, method, fill(path, e.ids, nil), merge(base, name, which.id))
				if !adsEnvelope(t, what, r) {
					continue
				}
				if r.Code != 404 || r.FirstError().Code != code || r.FirstError().Parameter != name {
					t.Errorf("%s: %d %s %q, want 404 %s %s: %.300s", what, r.Code, r.FirstError().Code, r.FirstError().Parameter, code, name, r.Raw)
				}
				if snapshot(t, conn, e.acct) != before || snapshot(t, conn, e.other) != beforeOther {
					t.Errorf("%s: data changed", what)
				}
			}
		}
	}
	if checked < 12 {
		t.Fatalf("only %d references checked", checked)
	}
	// a deleted entity: GET 404 (200 with_deleted), PUT and DELETE 404, nothing changed
	for _, tc := range []struct{ route, code string }{
		{"/12/accounts/{account_id}/line_items/{line_item_id}", "LINE_ITEM_NOT_FOUND"},
		{"/12/accounts/{account_id}/campaigns/{campaign_id}", "CAMPAIGN_NOT_FOUND"},
		{"/12/accounts/{account_id}/account_media/{account_media_id}", "ACCOUNT_MEDIA_NOT_FOUND"},
		{"/12/accounts/{account_id}/media_creatives/{media_creative_id}", "MEDIA_CREATIVE_NOT_FOUND"},
		{"/12/accounts/{account_id}/funding_instruments/{funding_instrument_id}", "FUNDING_INSTRUMENT_NOT_FOUND"},
	} {
		p := fill(tc.route, gone, nil)
		before := snapshot(t, conn, e.acct)
		e.alice.Get(t, p, nil).Fails(t, 404, tc.code, "")
		e.alice.Get(t, p, url.Values{"with_deleted": {"true"}}).Status(t, 200)
		for _, m := range []string{http.MethodPut, http.MethodDelete} {
			if sandboxOnly[m+" "+tc.route] || !slices.ContainsFunc(e.s.Routes(), func(rt httpxEndpoint) bool { return rt.Pattern == m+" "+tc.route }) {
				continue
			}
			var params url.Values
			if m == http.MethodPut {
				params = url.Values{"name": {"zombie"}}
			}
			r := e.alice.Do(t, m, p, params)
			if adsEnvelope(t, m+" "+tc.route+" deleted", r) && (r.Code != 404 || r.FirstError().Code != tc.code) {
				t.Errorf("%s %s of a deleted entity: %d %.300s", m, tc.route, r.Code, r.Raw)
			}
		}
		if snapshot(t, conn, e.acct) != before {
			t.Errorf("%s: a deleted entity changed", tc.route)
		}
	}
}

type httpxEndpoint = httpx.Endpoint

// TestHostilePartialUpdates: a PUT with a valid change and an invalid
// parameter is refused as a whole (nothing changed, no history), and a
// PUT that changes nothing writes no history entry without a change.
func TestHostilePartialUpdates(t *testing.T) {
	e := newHostileEnv(t, 1)
	conn := e.s.SQL()
	cases := []struct {
		route string
		bad   url.Values
	}{
		{"/12/accounts/{account_id}/line_items/{line_item_id}", url.Values{"bid_amount_local_micro": {"-1"}}},
		{"/12/accounts/{account_id}/line_items/{line_item_id}", url.Values{"bid_strategy": {"MAX"}}},
		{"/12/accounts/{account_id}/line_items/{line_item_id}", url.Values{"duration_in_days": {"2"}}},
		{"/12/accounts/{account_id}/line_items/{line_item_id}", url.Values{"daily_budget_amount_local_micro": {"20000000"}, "total_budget_amount_local_micro": {"10000000"}}},
		{"/12/accounts/{account_id}/line_items/{line_item_id}", url.Values{"start_time": {"2030-01-02T00:00:00Z"}, "end_time": {"2030-01-01T00:00:00Z"}}},
		{"/12/accounts/{account_id}/line_items/{line_item_id}", url.Values{"entity_status": {"DELETED"}}},
		{"/12/accounts/{account_id}/campaigns/{campaign_id}", url.Values{"daily_budget_amount_local_micro": {"-1"}}},
		{"/12/accounts/{account_id}/campaigns/{campaign_id}", url.Values{"entity_status": {"x"}}},
		{"/12/accounts/{account_id}/campaigns/{campaign_id}", url.Values{"budget_optimization": {"x"}}},
		{"/12/accounts/{account_id}", url.Values{"industry_type": {"x"}}},
		{"/12/accounts/{account_id}/media_library/{media_key}", url.Values{"title": {"t"}}}, // video only: the entry is an image
		{"/12/accounts/{account_id}/media_library/{media_key}", url.Values{"file_name": {strings.Repeat("f", 256)}}},
	}
	for _, tc := range cases {
		p := fill(tc.route, e.ids, nil)
		params := merge(tc.bad, "name", "partial "+storagetest.RandomSuffix(4))
		before := snapshot(t, conn, e.acct)
		r := e.alice.Put(t, p, params)
		what := fmt.Sprintf("PUT %s %v", tc.route, tc.bad)
		if adsEnvelope(t, what, r) && r.Code != 400 {
			t.Errorf("%s: %d, want 400: %.300s", what, r.Code, r.Raw)
		}
		if snapshot(t, conn, e.acct) != before {
			t.Errorf("%s: refused but changed", what)
		}
	}
	for _, tc := range []struct{ route, id string }{
		{"/12/accounts/{account_id}/line_items/{line_item_id}", e.ids["line_item_id"]},
		{"/12/accounts/{account_id}/campaigns/{campaign_id}", e.ids["campaign_id"]},
	} {
		route := tc.route
		p := fill(route, e.ids, nil)
		name, _ := e.alice.Get(t, p, nil).Status(t, 200).Data(t)["name"].(string)
		e.alice.Put(t, p, url.Values{"name": {name}}).Status(t, 200)
		n := sqlInt(t, conn, `SELECT count(*) FROM account_history WHERE entity_id = $1 AND change_type = 'UPDATE' AND changes = '{}'::jsonb`, tc.id)
		if n != 0 {
			t.Errorf("PUT %s with its own name: %d UPDATE entries without a change", route, n)
		}
	}
}
