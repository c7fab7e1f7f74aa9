package api_test

// The hostile-input catalogue (issue 32): every route of the route table
// (api.Modules.Endpoints, core and ads) gets generated bad-input variants,
// and another tenant's ids. See docs/hostile-input.md.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/activity"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// hostileReq is one generated request.
type hostileReq struct {
	variant     string
	note        string // what the variant changed, for the failure
	path        string // with the path values filled, already escaped
	query       string // raw query
	contentType string
	body        []byte
}

// hostileResult is one answer of the catalogue.
type hostileResult struct {
	pattern, variant string
	status           int
	raw              string
	changed          bool
	note             string // what the variant changed, for the failure
}

// tenantIDs are one tenant's ids by wildcard kind (see wildcardKind).
type tenantIDs map[string]string

// publicWildcards are path values naming what every caller may see or must
// name itself (users, posts, news, the stream endpoint names): they get
// tenant A's own value, and no cross-tenant variant.
var publicWildcards = map[string]bool{
	"id@/2/tweets": true, "id@/2/users": true, "id@/2/news": true, "username": true,
	"source_tweet_id": true, "source_user_id": true, "target_user_id": true, "participant_id": true,
	"tweet_id": true, "curated_category_id": true, "endpoint_id": true,
}

var wildcardRE = regexp.MustCompile(`\{([a-z_]+)\}`)

// wildcardKind names what a path value holds: its name, and for {id} the
// route's feature (the first two path segments).
func wildcardKind(path, name string) string {
	if name != "id" {
		return name
	}
	segs := strings.SplitN(strings.TrimPrefix(path, "/"), "/", 3)
	if len(segs) < 2 {
		return "id@/" + segs[0]
	}
	return "id@/" + segs[0] + "/" + segs[1]
}

// TestHostileInputCatalogue walks the route table: for every endpoint it
// generates hostile variants (missing input, wrong types, out-of-range and
// oversize values, a wrong content type, invalid UTF-8 in query, path and
// body, an unknown parameter, another tenant's ids) and requires no 5xx, no
// state change from a refused request, the route's error envelope, and
// cross-tenant answers identical to those for ids nobody has.
func TestHostileInputCatalogue(t *testing.T) {
	b, mods := setupWithAds(t, 1000)
	bodies := bodyCases(t, b)
	mallory := b.AddUser(t, "mallory", storage.AccessReadWrite)
	own := hostileTenant(t, b, b.App, b.Author, "oauth:author")
	other := hostileTenant(t, b, b.Other, mallory, "oauth:mallory")
	own.addPublic(t, b)
	h := &hostileRun{b: b, own: own, other: other, db: newDigester(t, b), bodies: bodies, counts: map[string]map[string]int{}}
	endpoints := mods.Endpoints(false)
	if testing.Short() {
		// The short run keeps one endpoint in four (all of them each
		// feature's first ones), enough to catch a regression of the kit.
		var some []httpx.Endpoint
		for i, e := range endpoints {
			if i%4 == 0 {
				some = append(some, e)
			}
		}
		endpoints = some
	}
	start := time.Now()
	for _, e := range endpoints {
		h.endpoint(t, e)
	}
	h.summary(t, len(endpoints), time.Since(start))
	for _, o := range h.offending {
		t.Error(o)
	}
}

// hostileTenant makes one tenant's records: an app's compliance job,
// webhook with a delivery and activity subscription; a user's media
// upload, direct message; an ad account with an entity of every kind.
func hostileTenant(t *testing.T, b *apitest.Bundle, app storage.App, user storage.User, authz string) *tenant {
	t.Helper()
	ctx := context.Background()
	ids := tenantIDs{}
	conn := apitest.DBConn(t, b)
	sqlID := func(q string, args ...any) string {
		t.Helper()
		var id string
		if err := conn.QueryRow(ctx, q, args...).Scan(&id); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return id
	}
	ids["id@/2/compliance"] = fmt.Sprint(factory.ComplianceJob(t, b.DB, &factory.ComplianceJobOpts{App: app}).ID)
	ids["id@/2/media"] = fmt.Sprint(factory.Media(t, b.DB, &factory.MediaOpts{Owner: &user}).ID)
	hook, err := b.DB.CreateWebhook(ctx, storage.WebhookCreate{AppID: app.ID, URL: fmt.Sprintf("https://hooks.example/%d", app.ID), CheckedAt: time.Now()})
	if err != nil {
		t.Fatalf("webhook: %v", err)
	}
	ids["webhook_id"] = fmt.Sprint(hook.ID)
	ids["delivery_id"] = fmt.Sprint(factory.WebhookDelivery(t, b.DB, hook, nil))
	ids["subscription_id"] = fmt.Sprint(factory.ActivitySubscriptionRow(t, b.DB, storage.ActivitySubscription{
		AppID: app.ID, EventType: publicActivityType(t), FilterUserID: user.ID}))
	dm := b.Call(t, "POST", fmt.Sprintf("/2/dm_conversations/with/%d/messages", b.User.ID), authz, httpx.ContentJSON, []byte(`{"text":"hi"}`))
	conv, _ := apitest.Obj(dm.Body, "data", "dm_conversation_id").(string)
	event, _ := apitest.Obj(dm.Body, "data", "dm_event_id").(string)
	if conv == "" || event == "" {
		t.Fatalf("direct message as %s: %d %.300s", authz, dm.Status, dm.Raw)
	}
	ids["dm_conversation_id"], ids["id@/2/dm_conversations"], ids["event_id"] = conv, conv, event

	acct := factory.AdAccount(t, b.DB, &factory.AdAccountOpts{Owner: &user}).ID
	ids["account_id"] = acct
	fi, camp, li := factory.AdsChain(t, b.DB, acct)
	ids["funding_instrument_id"], ids["campaign_id"], ids["line_item_id"] = fi, camp, li
	post := factory.Post(t, b.DB, &factory.PostOpts{Author: user})
	ids["promoted_tweet_id"] = sqlID(`INSERT INTO promoted_tweets (account_id, line_item_id, tweet_id) VALUES ($1, $2, $3) RETURNING id`, acct, li, post.ID)
	ids["targeting_criterion_id"] = sqlID(`INSERT INTO targeting_criteria (account_id, line_item_id, targeting_type, targeting_value) VALUES ($1, $2, 'LOCATION', 'v') RETURNING id`, acct, li)
	ids["line_item_curated_category_id"] = sqlID(`INSERT INTO line_item_curated_categories (account_id, line_item_id, curated_category_id) VALUES ($1, $2, '9fg8gmz96qdg') RETURNING id`, acct, li)
	am := sqlID(`INSERT INTO account_media (account_id, creative_type, media_url) VALUES ($1, 'BANNER', 'https://x/y.png') RETURNING id`, acct)
	ids["account_media_id"] = am
	ids["media_creative_id"] = sqlID(`INSERT INTO media_creatives (account_id, line_item_id, account_media_id) VALUES ($1, $2, $3) RETURNING id`, acct, li, am)
	aud := sqlID(`INSERT INTO custom_audiences (owner_account_id, name) VALUES ($1, 'audience') RETURNING id`, acct)
	ids["custom_audience_id"], ids["tailored_audience_id"] = aud, aud
	peer := factory.AdAccount(t, b.DB, nil).ID
	sqlID(`UPDATE ad_accounts SET business_id = (SELECT business_id FROM ad_accounts WHERE id = $2) WHERE id = $1 RETURNING id`, peer, acct)
	ids["tailored_audience_permission_id"] = sqlID(`INSERT INTO custom_audience_permissions (custom_audience_id, granted_account_id, permission_level) VALUES ($1, $2, 'READ_ONLY') RETURNING id`, aud, peer)
	ids["do_not_reach_list_id"] = sqlID(`INSERT INTO do_not_reach_lists (account_id, description) VALUES ($1, 'list') RETURNING id`, acct)
	sqlID(`INSERT INTO ad_account_features (account_id, feature) VALUES ($1, 'CATALOGS') RETURNING feature`, acct)
	ids["product_catalog_id"] = sqlID(`INSERT INTO product_catalogs (user_id, name, sandbox) VALUES ($1, 'catalog', false)
		ON CONFLICT (user_id, sandbox) DO UPDATE SET name = product_catalogs.name RETURNING id`, user.ID)
	ids["card_id"] = sqlID(`INSERT INTO ads_cards (id, account_id, kind, card_type, card_uri, name, body)
		SELECT x.id, $1, 'component', 'IMAGE_WEBSITE', 'card://' || x.id, 'card', $2::jsonb FROM (SELECT aviary_ads_id() AS id) x RETURNING id`,
		acct, `{"components":[{"type":"MEDIA","media_key":"3_1"},{"type":"DETAILS","title":"t","destination":{"type":"WEBSITE","url":"https://x.test"}}]}`)
	lib := apitest.SucceededMedia(t, b.DB, user, factory.MediaOpts{}, storage.MediaResult{Width: 1280, Height: 720})
	ids["media_key"] = lib.Key
	if r := b.Call(t, "POST", "/12/accounts/"+acct+"/media_library?"+url.Values{"media_key": {lib.Key}, "name": {"lib"}}.Encode(), authz, "", nil); r.Status != 200 {
		t.Fatalf("media library: %d %.300s", r.Status, r.Raw)
	}
	bearer := b.Bearer
	if app.ID == b.Other.ID {
		bearer = b.OtherBearer
	}
	return &tenant{ids: ids, bearer: bearer, user: authz}
}

// publicActivityType is an activity event type no grant is bound to.
func publicActivityType(t *testing.T) string {
	t.Helper()
	for _, n := range activity.Names() {
		if !slices.Contains(activity.GrantBoundNames(), n) && n != "oauth.revoke" {
			return n
		}
	}
	t.Fatal("no public activity event type")
	return ""
}

// tenant is one side of the catalogue: its ids and credentials.
type tenant struct {
	ids          tenantIDs
	bearer, user string
}

// addPublic sets tenant A's values of the public path values.
func (tn *tenant) addPublic(t *testing.T, b *apitest.Bundle) {
	t.Helper()
	post := fmt.Sprint(factory.Post(t, b.DB, &factory.PostOpts{Author: b.Author}).ID)
	me := fmt.Sprint(b.Author.ID)
	for k, v := range map[string]string{
		"id@/2/tweets": post, "id@/2/users": me, "id@/2/news": "1", "username": b.Author.Username,
		"source_tweet_id": post, "source_user_id": me, "target_user_id": fmt.Sprint(b.User.ID),
		"participant_id": fmt.Sprint(b.User.ID), "tweet_id": post, "curated_category_id": "9fg8gmz96qdg",
		"endpoint_id": storage.StreamEndpoints[0],
	} {
		tn.ids[k] = v
	}
}

// hostileRun is the catalogue's state: tenants, tallies, failures.
type hostileRun struct {
	b          *apitest.Bundle
	own, other *tenant
	db         *digester
	bodies     map[string]bodyCase
	counts     map[string]map[string]int // variant -> status class -> n
	requests   int
	offending  []string
	// accepted lists the variants a writing route accepted, changing the
	// database (legitimately: a valid request after all), for the log.
	accepted []string
}

// nonexistent is an id of the same shape as id that no record has: its
// last three characters changed within their class.
func nonexistent(id string) string {
	if _, numeric := apitest.StrconvID(id); numeric && len(id) < 8 {
		return id + "0000000" // a small serial id: one far beyond the others
	}
	out := []byte(id)
	for i := max(0, len(out)-3); i < len(out); i++ {
		switch c := out[i]; {
		case c >= '0' && c <= '9':
			out[i] = '0' + (c-'0'+5)%10
		case c >= 'a' && c <= 'z':
			out[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			out[i] = 'A' + (c-'A'+13)%26
		}
	}
	return string(out)
}

// fill replaces the path values of path: by value(kind) when set, else by
// the own tenant's id.
func (h *hostileRun) fill(t *testing.T, pattern, path string, value func(kind string) (string, bool)) string {
	return wildcardRE.ReplaceAllStringFunc(path, func(m string) string {
		kind := wildcardKind(path, m[1:len(m)-1])
		if v, ok := value(kind); ok {
			return v
		}
		v, ok := h.own.ids[kind]
		if !ok {
			t.Errorf("%s: no generator for the path value %s (kind %s): add its records to hostileTenant or publicWildcards", pattern, m, kind)
			return "1"
		}
		return url.PathEscape(v)
	})
}

// authz is the credential tenant A presents to e: a bearer token for
// app-only routes, else OAuth 1.0a as A's user.
func (h *hostileRun) authz(e httpx.Endpoint) string {
	if slices.Contains(e.Auth.Accept, auth.AppOnly) {
		return h.own.bearer
	}
	return h.own.user
}

// variants generates the hostile requests of e.
func (h *hostileRun) variants(t *testing.T, e httpx.Endpoint) []hostileReq {
	_, path, _ := strings.Cut(e.Pattern, " ")
	ownPath := h.fill(t, e.Pattern, path, func(string) (string, bool) { return "", false })
	allParams := func(v string) string {
		q := url.Values{}
		for _, name := range e.Query {
			q.Set(name, v)
		}
		return q.Encode()
	}
	var out []hostileReq
	add := func(r hostileReq) {
		if r.path == "" {
			r.path = ownPath
		}
		out = append(out, r)
	}
	hasBody, hasQuery := len(e.Body.Types) > 0, len(e.Query) > 0
	jsonBody := slices.Contains(e.Body.Types, httpx.ContentJSON)
	ctype := ""
	if hasBody {
		ctype = e.Body.Types[0]
	}
	if hasBody || hasQuery {
		add(hostileReq{variant: "missing", contentType: ctype})
	}
	if hasQuery {
		add(hostileReq{variant: "wrong_type", query: allParams(`{"$ne":[1]}`)})
		add(hostileReq{variant: "out_of_range", query: allParams("-99999999999999999999999")})
		add(hostileReq{variant: "oversize_param", query: allParams(strings.Repeat("9", 70_000))})
		add(hostileReq{variant: "invalid_utf8_query", query: allParams("a\xff\xfeb")})
	}
	if jsonBody {
		add(hostileReq{variant: "wrong_type_body", contentType: httpx.ContentJSON, body: []byte(`["not","an","object"]`)})
		add(hostileReq{variant: "out_of_range_body", contentType: httpx.ContentJSON, body: []byte(`{"max_results":1e999,"total_bytes":-99999999999999999999999}`)})
		add(hostileReq{variant: "invalid_utf8_body", contentType: httpx.ContentJSON, body: []byte("{\"text\":\"a\xff\xfeb\",\"name\":\"\xc3\"}")})
	} else if slices.Contains(e.Body.Types, httpx.ContentForm) {
		add(hostileReq{variant: "invalid_utf8_body", contentType: httpx.ContentForm, body: []byte("name=a%FF%FEb&" + allParams("a\xffb"))})
	}
	if hasBody {
		max := e.Body.MaxBytes
		if max <= 0 {
			max = httpx.DefaultMaxBody
		}
		big := append([]byte(`{"text":"`), bytes.Repeat([]byte("x"), int(max))...)
		add(hostileReq{variant: "oversize_body", contentType: ctype, body: append(big, `"}`...)})
		add(hostileReq{variant: "wrong_content_type", contentType: "text/plain; charset=utf-8", body: []byte(`{}`)})
	}
	// One parameter at a time, the others absent, so each parameter's own
	// validation is reached: by default each gets one of the hostile
	// values in turn; AVIARY_HOSTILE_PARAMS=all gives each all of them.
	form := ""
	if slices.Contains(e.Body.Types, httpx.ContentForm) {
		form = httpx.ContentForm
	}
	for i, name := range e.Query {
		for j, v := range paramValues {
			if j != i%len(paramValues) && os.Getenv("AVIARY_HOSTILE_PARAMS") != "all" {
				continue
			}
			add(hostileReq{variant: "param_" + v.name, note: " (" + name + ")", query: url.Values{name: {v.value}}.Encode(), contentType: form})
		}
	}
	add(hostileReq{variant: "unknown_param", query: "zz_hostile_unknown=1"})
	if wildcardRE.MatchString(path) {
		add(hostileReq{variant: "invalid_utf8_path", path: wildcardRE.ReplaceAllString(path, "%FF%FEx")})
		add(hostileReq{variant: "path_out_of_range", path: wildcardRE.ReplaceAllString(path, "99999999999999999999999999")})
	}
	return out
}

// endpoint runs e's variants, then its cross-tenant pairs.
func (h *hostileRun) endpoint(t *testing.T, e httpx.Endpoint) {
	method, _, _ := strings.Cut(e.Pattern, " ")
	write := method != http.MethodGet
	before := h.db.digest(t)
	for _, r := range h.variants(t, e) {
		res := h.send(t, e, method, h.authz(e), r)
		if write {
			after := h.db.digest(t)
			res.changed, before = after != before, after
		}
		h.judge(e, res)
	}
	if write {
		before = h.db.digest(t)
	}
	h.fields(t, e, method)
	h.crossTenant(t, e, method)
	if after := h.db.digest(t); after != before && !write {
		h.offending = append(h.offending, fmt.Sprintf("%s: a GET changed the database", e.Pattern))
	}
}

// crossTenant sends e with tenant B's ids in its private path values
// (all of them; and, with two or more, B's ids under A's account) and the
// same with ids nobody has: the answers must be refusals, identical but
// for the id.
func (h *hostileRun) crossTenant(t *testing.T, e httpx.Endpoint, method string) {
	_, path, _ := strings.Cut(e.Pattern, " ")
	var private []string
	for _, m := range wildcardRE.FindAllStringSubmatch(path, -1) {
		if kind := wildcardKind(path, m[1]); !publicWildcards[kind] {
			private = append(private, kind)
		}
	}
	if len(private) == 0 {
		return
	}
	cases := [][]string{private}
	if len(private) > 1 {
		cases = append(cases, private[1:]) // A's parent (the account), B's child
	}
	for i, kinds := range cases {
		variant := "cross_tenant"
		if i == 1 {
			variant = "cross_tenant_child"
		}
		swap := func(ids func(string) string) (string, []string) {
			var used []string
			p := h.fill(t, e.Pattern, path, func(kind string) (string, bool) {
				if !slices.Contains(kinds, kind) {
					return "", false
				}
				v := ids(kind)
				used = append(used, v)
				return url.PathEscape(v), true
			})
			return p, used
		}
		theirs, theirIDs := swap(func(k string) string { return h.other.ids[k] })
		nobody, nobodyIDs := swap(func(k string) string { return nonexistent(h.other.ids[k]) })
		h.pair(t, e, method, h.authz(e), hostileReq{variant: variant, path: theirs}, hostileReq{variant: variant, path: nobody}, theirIDs, nobodyIDs)
	}
	h.crossTenantQuery(t, e, method, path)
}

// queryKinds maps query parameters holding private ids to their kind,
// where the name alone does not say it ("campaign_ids" says campaign_id).
var queryKinds = map[string]string{
	"DELETE /2/activity/subscriptions ids": "subscription_id",
}

// crossTenantQuery sends each query parameter of e that holds private ids
// with tenant B's id, and with an id nobody has.
func (h *hostileRun) crossTenantQuery(t *testing.T, e httpx.Endpoint, method, path string) {
	own := h.fill(t, e.Pattern, path, func(string) (string, bool) { return "", false })
	for _, name := range e.Query {
		kind, ok := queryKinds[e.Pattern+" "+name]
		if !ok {
			kind = strings.TrimSuffix(name, "s")
		}
		id, ok := h.other.ids[kind]
		if !ok || publicWildcards[kind] {
			continue
		}
		theirs := hostileReq{variant: "cross_tenant_query", path: own, query: url.Values{name: {id}}.Encode()}
		nobody := hostileReq{variant: "cross_tenant_query", path: own, query: url.Values{name: {nonexistent(id)}}.Encode()}
		if slices.Contains(e.Body.Types, httpx.ContentForm) {
			theirs.contentType, nobody.contentType = httpx.ContentForm, httpx.ContentForm
		}
		h.pair(t, e, method, h.authz(e), theirs, nobody, []string{id}, []string{nonexistent(id)})
	}
}

// pair sends a request with tenant B's ids and the same with ids nobody
// has: the first must not succeed with data, change nothing, and answer
// as the second but for the ids.
func (h *hostileRun) pair(t *testing.T, e httpx.Endpoint, method, authz string, theirs, nobody hostileReq, theirIDs, nobodyIDs []string) {
	t.Helper()
	nobody.variant += "_nonexistent"
	before := h.db.digest(t)
	got := h.send(t, e, method, authz, theirs)
	got.changed = h.db.digest(t) != before
	want := h.send(t, e, method, authz, nobody)
	h.judge(e, got)
	h.judge(e, want)
	g, w := normaliseIDs(got.raw, theirIDs), normaliseIDs(want.raw, nobodyIDs)
	if got.status != want.status || g != w {
		h.offending = append(h.offending, fmt.Sprintf("%s [%s]: another tenant's ids answered %d %.600s; ids nobody has %d %.600s",
			e.Pattern, theirs.variant, got.status, g, want.status, w))
		return
	}
	if got.status < 400 && (got.status != 200 || strings.Contains(got.raw, `"data":{`)) {
		h.offending = append(h.offending, fmt.Sprintf("%s [%s]: another tenant's ids answered %d: %.300s", e.Pattern, theirs.variant, got.status, got.raw))
	}
}

// fields sends e's accepted JSON body with one value at a time of the
// wrong type, and with tenant B's id in each field holding a private id.
func (h *hostileRun) fields(t *testing.T, e httpx.Endpoint, method string) {
	if !slices.Contains(e.Body.Types, httpx.ContentJSON) {
		return
	}
	c, ok := h.bodies[e.Pattern]
	if !ok {
		h.offending = append(h.offending, fmt.Sprintf("%s takes a JSON body but has no accepted body in repeatedKeyCases to derive field variants from", e.Pattern))
		return
	}
	for i, l := range leaves(c.body, nil) {
		if i < maxFieldVariants {
			before := h.db.digest(t)
			res := h.send(t, e, method, c.authz, hostileReq{variant: "wrong_type_field", path: c.path, contentType: httpx.ContentJSON,
				body: apitest.JSONBody(replaced(c.body, l.at, wrongType(l.value)))})
			res.changed = h.db.digest(t) != before
			res.note = fmt.Sprintf(" (field %v)", l.at)
			h.judge(e, res)
		}
		key, _ := l.at[len(l.at)-1].(string)
		id, private := h.other.ids[key]
		if _, isString := l.value.(string); !private || publicWildcards[key] || !isString {
			continue
		}
		body := func(v string) hostileReq {
			return hostileReq{variant: "cross_tenant_body", path: c.path, contentType: httpx.ContentJSON, body: apitest.JSONBody(replaced(c.body, l.at, v))}
		}
		h.pair(t, e, method, c.authz, body(id), body(nonexistent(id)), []string{id}, []string{nonexistent(id)})
	}
}

// normaliseIDs replaces the ids, where they stand as whole tokens (not a
// path segment: "/2/problems" holds no id 2), by ID.
func normaliseIDs(raw string, ids []string) string {
	for _, id := range ids {
		re := regexp.MustCompile(`(^|[^0-9A-Za-z_/])` + regexp.QuoteMeta(id) + `($|[^0-9A-Za-z_/])`)
		for re.MatchString(raw) {
			raw = re.ReplaceAllString(raw, "${1}ID${2}")
		}
	}
	return raw
}

// send sends r; a stream (no end within two seconds) answers what arrived.
func (h *hostileRun) send(t *testing.T, e httpx.Endpoint, method, authz string, r hostileReq) hostileResult {
	t.Helper()
	h.requests++
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	target := h.b.Srv.URL + r.path
	if r.query != "" {
		target += "?" + r.query
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(r.body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if strings.HasPrefix(authz, "oauth:") {
		tok := h.b.Token
		if authz == "oauth:author" {
			tok = h.b.AuthorToken
		}
		if named, ok := h.b.Tokens[strings.TrimPrefix(authz, "oauth:")]; ok {
			tok = named
		}
		if err := auth.SignRequest(req, "", h.b.App.ConsumerKey, h.b.App.ConsumerSecret, tok.Token, tok.Secret, time.Now(), ""); err != nil {
			t.Fatalf("sign: %v", err)
		}
	} else {
		req.Header.Set("Authorization", authz)
	}
	resp, err := apitest.NoRedirects().Do(req)
	if err != nil {
		return hostileResult{pattern: e.Pattern, variant: r.variant, note: r.note, status: 0, raw: err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return hostileResult{pattern: e.Pattern, variant: r.variant, note: r.note, status: resp.StatusCode, raw: string(raw)}
}

// paramValues are the values one parameter at a time gets.
var paramValues = []struct{ name, value string }{
	{"wrong_type", `{"$ne":[1]}`},
	{"out_of_range", "-99999999999999999999999"},
	{"invalid_utf8", "a\xff\xfeb"},
	{"zero", "0"},
	{"huge", "9223372036854775808"},
	{"empty", ""},
}

// acceptedIsWrong are the variants no route may accept.
var acceptedIsWrong = map[string]bool{
	"unknown_param": true, "oversize_param": true, "oversize_body": true, "wrong_content_type": true,
	"invalid_utf8_path": true, "invalid_utf8_body": true, "invalid_utf8_query": true, "path_out_of_range": true,
	"wrong_type_body": true, "out_of_range_body": true, "wrong_type_field": true,
}

// judge tallies res and records what is wrong with it.
func (h *hostileRun) judge(e httpx.Endpoint, res hostileResult) {
	class := fmt.Sprintf("%dxx", res.status/100)
	if res.status == 0 {
		class = "none"
	}
	if h.counts[res.variant] == nil {
		h.counts[res.variant] = map[string]int{}
	}
	h.counts[res.variant][class]++
	if res.status < 400 && res.changed {
		h.accepted = append(h.accepted, fmt.Sprintf("%s [%s%s] %d", e.Pattern, res.variant, res.note, res.status))
	}
	bad := func(why string) {
		h.offending = append(h.offending, fmt.Sprintf("%s [%s%s]: %s: %d %.400s", e.Pattern, res.variant, res.note, why, res.status, res.raw))
	}
	_, path, _ := strings.Cut(e.Pattern, " ")
	ads := strings.HasPrefix(path, "/12/") || strings.HasPrefix(path, "/5/")
	switch {
	case res.status == 0:
		bad("no answer")
	case res.status >= 500:
		bad("server error")
	case res.status >= 400 && res.changed:
		bad("refused, but the database changed")
	case res.status == http.StatusRequestHeaderFieldsTooLarge:
		// net/http refuses a request line and header over MaxHeaderBytes
		// before any handler runs, in plain text (docs/hostile-input.md).
	case res.status >= 400 && !hostileEnvelope(res.raw, ads):
		bad("not the route's error envelope")
	case res.status < 400 && res.changed && acceptedIsWrong[res.variant]:
		bad("accepted, and the database changed")
	case res.status < 400 && acceptedIsWrong[res.variant] && !itemsRefused(res.raw):
		bad("accepted")
	}
}

// itemsRefused reports whether raw is a batch answer (the product
// catalogue's PUT) refusing every item: the platform answers those 200 with
// an error per item.
func itemsRefused(raw string) bool {
	var v struct {
		Data struct {
			Products []struct{ Status string } `json:"products_response"`
		}
	}
	if err := jsonUnmarshal(raw, &v); err != nil || len(v.Data.Products) == 0 {
		return false
	}
	for _, p := range v.Data.Products {
		if p.Status != "ERROR" {
			return false
		}
	}
	return true
}

// hostileEnvelope reports whether raw is the error envelope of the route:
// the ads one ({errors: [{code, message}], request}) or Problem JSON.
func hostileEnvelope(raw string, ads bool) bool {
	var v map[string]any
	if err := jsonUnmarshal(raw, &v); err != nil {
		return false
	}
	if ads {
		errs, _ := v["errors"].([]any)
		_, req := v["request"].(map[string]any)
		if len(errs) == 0 || !req {
			return false
		}
		first, _ := errs[0].(map[string]any)
		return first["code"] != nil && first["message"] != nil
	}
	_, title := v["title"].(string)
	_, typ := v["type"].(string)
	return title && typ
}

// digester fingerprints every table in one round trip, without the tables
// requests may legitimately touch while refused: usage counters and stream
// connection bookkeeping.
type digester struct {
	conn *pgx.Conn
	sql  string
}

func newDigester(t *testing.T, b *apitest.Bundle) *digester {
	t.Helper()
	conn := apitest.DBConn(t, b)
	rows, err := conn.Query(context.Background(), `SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public'
		AND tablename NOT IN ('app_usage_daily', 'stream_connections') ORDER BY 1`)
	if err != nil {
		t.Fatalf("tables: %v", err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("tables: %v", err)
	}
	var parts []string
	for _, tbl := range tables {
		// The row count and the newest row version: an insert, update or
		// delete changes one of them, at a fraction of a checksum's cost.
		parts = append(parts, `SELECT '`+tbl+`=' || count(*) || ':' || coalesce(max(xmin::text::bigint), 0) AS d FROM `+tbl)
	}
	return &digester{conn: conn, sql: `SELECT string_agg(d, ';') FROM (` + strings.Join(parts, " UNION ALL ") + `) s`}
}

// digest is the database's checksum.
func (d *digester) digest(t *testing.T) string {
	t.Helper()
	var out string
	if err := d.conn.QueryRow(context.Background(), d.sql).Scan(&out); err != nil {
		t.Fatalf("digest: %v", err)
	}
	return out
}

// summary logs the catalogue: variants x status classes.
func (h *hostileRun) summary(t *testing.T, endpoints int, took time.Duration) {
	classes := []string{"2xx", "3xx", "4xx", "5xx", "none"}
	var variants []string
	for v := range h.counts {
		variants = append(variants, v)
	}
	sort.Strings(variants)
	var sb strings.Builder
	fmt.Fprintf(&sb, "hostile catalogue: %d endpoints, %d requests, %d offending, %s\n", endpoints, h.requests, len(h.offending), took.Round(time.Millisecond))
	fmt.Fprintf(&sb, "%-28s", "variant")
	for _, c := range classes {
		fmt.Fprintf(&sb, "%7s", c)
	}
	sb.WriteString("\n")
	for _, v := range variants {
		fmt.Fprintf(&sb, "%-28s", v)
		for _, c := range classes {
			fmt.Fprintf(&sb, "%7d", h.counts[v][c])
		}
		sb.WriteString("\n")
	}
	fmt.Fprintf(&sb, "accepted, changing the database (valid after all): %d\n", len(h.accepted))
	for _, a := range h.accepted {
		sb.WriteString("  " + a + "\n")
	}
	t.Log(sb.String())
}

func jsonUnmarshal(raw string, v any) error { return json.Unmarshal([]byte(raw), v) }

// bodyCase is a JSON body a route would accept (the first case of
// repeatedKeyCases, its repeated keys dropped), the base of the per-field
// variants.
type bodyCase struct {
	path, authz string
	body        any
}

// firstWins decodes JSON keeping the first of repeated keys (and of keys
// differing only in case), as the API's decoder would refuse them.
func firstWins(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		if d == '[' {
			var arr []any
			for dec.More() {
				v, err := firstWins(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		obj := map[string]any{}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := firstWins(dec)
			if err != nil {
				return nil, err
			}
			if !seen[strings.ToLower(k)] {
				seen[strings.ToLower(k)] = true
				obj[k] = v
			}
		}
		_, err := dec.Token()
		return obj, err
	default:
		return tok, nil
	}
}

// bodyCases are the accepted JSON bodies of the JSON routes, by pattern.
func bodyCases(t *testing.T, b *apitest.Bundle) map[string]bodyCase {
	t.Helper()
	out := map[string]bodyCase{}
	for pattern, cases := range repeatedKeyCases(t, b) {
		dec := json.NewDecoder(strings.NewReader(cases[0].body))
		dec.UseNumber()
		v, err := firstWins(dec)
		if err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		out[pattern] = bodyCase{path: cases[0].path, authz: cases[0].authz, body: v}
	}
	return out
}

// leaf is one value of a JSON document and where it is.
type leaf struct {
	at    []any // keys (string) and indexes (int)
	value any
}

// leaves lists the values of v, objects and arrays included (each before
// what it holds).
func leaves(v any, at []any) []leaf {
	out := []leaf{}
	if len(at) > 0 {
		out = append(out, leaf{at: slices.Clone(at), value: v})
	}
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, leaves(x[k], append(at, k))...)
		}
	case []any:
		for i, e := range x {
			out = append(out, leaves(e, append(at, i))...)
		}
	}
	return out
}

// replaced is a deep copy of v with the value at "at" set to to.
func replaced(v any, at []any, to any) any {
	if len(at) == 0 {
		return to
	}
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = e
		}
		k := at[0].(string)
		c[k] = replaced(x[k], at[1:], to)
		return c
	case []any:
		c := slices.Clone(x)
		i := at[0].(int)
		c[i] = replaced(x[i], at[1:], to)
		return c
	}
	return v
}

// wrongType is a value of another JSON type than v.
func wrongType(v any) any {
	switch v.(type) {
	case string:
		return 12345
	case json.Number:
		return "12"
	case bool:
		return "yes"
	case []any:
		return map[string]any{"a": 1}
	case map[string]any:
		return []any{1}
	}
	return []any{}
}

// maxFieldVariants caps the per-field variants of one route (arrays of
// products or users repeat the same fields).
const maxFieldVariants = 12
