package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apitest"
	"github.com/aviary-dev/aviary/api/selfdoc"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// methodDifferences are methods Aviary serves on a path the platform's
// description has, though the description does not list that method there,
// each with the reason (docs/openapi.md).
var methodDifferences = map[string]string{
	"GET /2/webhooks/{webhook_id}": "Aviary's look at one webhook and its delivery state, beside its delivery log (docs/webhooks.md); " +
		"the description has PUT and DELETE there only",
	"POST /2/users/{id}/blocking": "the platform's historic v2 block write, which client libraries still call; " +
		"2.167 lists only the GET (docs/social-graph.md)",
}

// paramDifferences are the parameters of a shared operation that differ
// from the platform's description ("METHOD path" -> "in name" -> reason):
// ones Aviary takes that the description lacks, ones the description has
// that Aviary does not take, and ones whose required flag differs.
var paramDifferences = map[string]map[string]string{
	"GET /2/tweets/search/stream": {
		"query start_time": "the description's recovery window; Aviary replays with backfill_minutes only (docs/streams.md)",
		"query end_time":   "the same",
	},
	"POST /2/tweets/search/webhooks/{webhook_id}": fieldsOnLink,
}

// fieldsOnLink: linking a webhook to the filtered stream takes the
// stream's fields and expansions, which its deliveries are rendered with
// (docs/webhooks.md); the description lists no parameters there.
var fieldsOnLink = map[string]string{
	"query expansions": "fields of the linked deliveries", "query media.fields": "fields of the linked deliveries",
	"query place.fields": "fields of the linked deliveries", "query poll.fields": "fields of the linked deliveries",
	"query post.fields": "fields of the linked deliveries", "query tweet.fields": "fields of the linked deliveries",
	"query user.fields": "fields of the linked deliveries",
}

// securityDifferences are shared operations whose credential kinds (or
// OAuth 2.0 scopes) differ from the description's, with the reason.
var securityDifferences = map[string]string{
	"GET /2/tweets/counts/recent": "app-only bearer, as the platform's documentation pages and the spec's table give it " +
		"(docs/search.md); the description also names an OAuth 2.0 user token",
	"POST /2/webhooks": "app-only bearer: webhook registration is an app's (docs/webhooks.md, \"user context: 403\"); " +
		"the description also names OAuth 1.0a",
	"PUT /2/webhooks/{webhook_id}":    "the same",
	"DELETE /2/webhooks/{webhook_id}": "the same",
}

// paramAliases are parameters Aviary takes under two names wherever the
// description has one of them: tweet.fields and post.fields are one
// parameter (docs/posts-fields.md: the description says post.fields on
// REST endpoints and tweet.fields on streams, clients send either).
var paramAliases = map[string]string{"query tweet.fields": "query post.fields", "query post.fields": "query tweet.fields"}

// servedDescription is the description a server with every module and the
// platform's schemas serves, the endpoints it describes, and the platform's
// description.
func servedDescription(t *testing.T) (doc map[string]any, raw []byte, described []string, platform *selfdoc.Platform, b *apitest.Bundle) {
	t.Helper()
	platform, err := selfdoc.ParsePlatform(apitest.OpenAPIDescription(t))
	if err != nil {
		t.Fatal(err)
	}
	doc, raw, described, b = serve(t, platform)
	return doc, raw, described, platform, b
}

// serve starts a server with every module, whose description uses
// platform's schemas (nil: Aviary's own), and reads its description.
func serve(t *testing.T, platform *selfdoc.Platform) (doc map[string]any, raw []byte, described []string, b *apitest.Bundle) {
	t.Helper()
	var mods api.Modules
	b = apitest.SetupOn(t, 100, func(db *postgres.DB, d *api.Deps) {
		cursors, err := adsx.NewCursors(bytes.Repeat([]byte{7}, 32))
		if err != nil {
			t.Fatalf("cursors: %v", err)
		}
		d.Modules.Ads = api.NewAdsModules(adsx.Kit{Accounts: db, Cursors: cursors, Logger: d.Logger}, db, nil)
		d.Platform = platform
		d.PublicURL = "http://aviary.test"
		mods = d.Modules
	})
	r := b.Call(t, "GET", api.OpenAPIPath, "", "", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("GET %s without credentials: %d %s: %.300s", api.OpenAPIPath, r.Status, r.Header.Get("Content-Type"), r.Raw)
	}
	if err := json.Unmarshal([]byte(r.Raw), &doc); err != nil {
		t.Fatal(err)
	}
	for _, e := range mods.Described(false) {
		method, path, err := selfdoc.SplitPattern(e.Pattern)
		if err != nil {
			t.Fatal(err)
		}
		described = append(described, method+" "+path)
	}
	return doc, []byte(r.Raw), described, b
}

// loadValid loads raw and validates it as OpenAPI 3.
func loadValid(t *testing.T, raw []byte) {
	t.Helper()
	loaded, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	// The platform's schemas use look-ahead patterns Go's regexp
	// cannot compile (as apitest's loader notes).
	if err := loaded.Validate(t.Context(), openapi3.DisableSchemaPatternValidation()); err != nil {
		t.Fatal(err)
	}
}

// describedOps are the "METHOD path" operations of a description.
func describedOps(doc map[string]any) []string {
	paths, _ := doc["paths"].(map[string]any)
	var listed []string
	for path, item := range paths {
		for method := range item.(map[string]any) {
			listed = append(listed, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(listed)
	return listed
}

// sameOps reports the operations served but not described and described
// but not served.
func sameOps(t *testing.T, listed, described []string) {
	t.Helper()
	for _, op := range described {
		if !slices.Contains(listed, op) {
			t.Errorf("served but not described: %s", op)
		}
	}
	for _, op := range listed {
		if !slices.Contains(described, op) {
			t.Errorf("described but not served: %s", op)
		}
	}
	if len(listed) != len(described) {
		t.Errorf("%d operations described, %d served", len(listed), len(described))
	}
}

// TestServedOpenAPIDescriptionOwnSchemas: without the platform's
// description (AVIARY_OPENAPI_FILE unset), the served description is still
// a valid OpenAPI 3 document of exactly the served routes, with Aviary's
// own schemas.
func TestServedOpenAPIDescriptionOwnSchemas(t *testing.T) {
	doc, raw, described, b := serve(t, nil)
	loadValid(t, raw)
	listed := describedOps(doc)
	sameOps(t, listed, described)
	// Each described operation is routed: a call without credentials
	// reaches it (401, 403, or its answer), never the not-found or
	// method-not-allowed answer of an unrouted request.
	for _, op := range listed {
		method, path, _ := strings.Cut(op, " ")
		for _, name := range selfdoc.PathParams(path) {
			path = strings.Replace(path, "{"+name+"}", "1", 1)
		}
		r := b.Call(t, method, path, "", "", nil)
		if r.Status == 405 || strings.Contains(r.Raw, "No endpoint serves") || strings.Contains(r.Raw, "ROUTE_NOT_FOUND") {
			t.Errorf("%s is described but %s %s is not routed: %d %.200s", op, method, path, r.Status, r.Raw)
		}
	}
	if v := doc["info"].(map[string]any)["x-aviary-platform-description"]; v != nil {
		t.Errorf("platform version %v without a platform description", v)
	}
}

// TestServedOpenAPIDescription: GET /2/openapi.json is a valid OpenAPI 3
// document listing exactly the served routes; on every path it shares
// with the platform's description, the methods, the parameters (name,
// place, required) and the response schemas are the platform's, but for
// the documented differences.
func TestServedOpenAPIDescription(t *testing.T) {
	doc, raw, described, platform, _ := servedDescription(t)

	t.Run("valid OpenAPI 3", func(t *testing.T) { loadValid(t, raw) })
	paths, _ := doc["paths"].(map[string]any)
	listed := describedOps(doc)
	t.Run("exactly the served routes", func(t *testing.T) { sameOps(t, listed, described) })

	// A path the description has under other wildcard names would not be
	// compared at all: the names must be the description's.
	byShape := map[string]string{}
	for _, p := range platform.Paths() {
		byShape[pathShape(p)] = p
	}
	shared := 0
	for _, op := range described {
		method, path, _ := strings.Cut(op, " ")
		methods := platform.Methods(path)
		if len(methods) == 0 {
			if theirs, ok := byShape[pathShape(path)]; ok {
				t.Errorf("%s: the description has this path as %s (wildcards named differently)", op, theirs)
			}
			continue
		}
		if !slices.Contains(methods, method) {
			if methodDifferences[op] == "" {
				t.Errorf("%s: the platform's description has %s on this path but not %s (add it to methodDifferences with the reason, or fix the route)", op, methods, method)
			}
			continue
		}
		shared++
		ours := paths[path].(map[string]any)[strings.ToLower(method)].(map[string]any)
		theirs := platform.Operation(method, path)
		t.Run(op, func(t *testing.T) {
			checkParams(t, op, ours, theirs, doc, platform)
			if got, want := securityOf(ours), securityOf(theirs); got != want && securityDifferences[op] == "" {
				t.Errorf("credentials %s, the platform's %s", got, want)
			}
			checkResponses(t, ours, theirs, doc, platform)
		})
	}
	if shared == 0 {
		t.Fatal("no path is shared with the platform's description")
	}
	t.Logf("%d operations described, %d shared with the platform's description %s", len(listed), shared, platform.Version)
}

// checkParams compares the parameters' names, places and required flags.
func checkParams(t *testing.T, op string, ours, theirs map[string]any, doc map[string]any, platform *selfdoc.Platform) {
	t.Helper()
	want := map[string]bool{}
	for _, p := range platform.Parameters(theirs) {
		want[p.In+" "+p.Name] = p.Required
	}
	got := map[string]bool{}
	for _, p := range ourParams(ours, doc) {
		got[p.In+" "+p.Name] = p.Required
	}
	for _, key := range slices.Sorted(maps.Keys(got)) {
		req, ok := want[key]
		if _, alias := want[paramAliases[key]]; !ok && alias {
			continue
		}
		switch {
		case !ok && paramDifferences[op][key] == "":
			t.Errorf("parameter %s is not in the platform's description", key)
		case ok && req != got[key] && paramDifferences[op][key] == "":
			t.Errorf("parameter %s: required %v, the platform's %v", key, got[key], req)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[key]; !ok && paramDifferences[op][key] == "" {
			t.Errorf("parameter %s of the platform's description is not taken", key)
		}
	}
}

// pathShape is a path with its wildcards unnamed: "/2/tweets/{}".
func pathShape(path string) string {
	for _, name := range selfdoc.PathParams(path) {
		path = strings.Replace(path, "{"+name+"}", "{}", 1)
	}
	return path
}

// securityOf spells an operation's security alternatives, sorted:
// "BearerToken OAuth2UserToken[tweet.read users.read] UserToken".
func securityOf(op map[string]any) string {
	list, _ := op["security"].([]any)
	var alts []string
	for _, item := range list {
		for scheme, scopes := range item.(map[string]any) {
			var names []string
			for _, s := range scopes.([]any) {
				names = append(names, s.(string))
			}
			slices.Sort(names)
			if len(names) > 0 {
				scheme += "[" + strings.Join(names, " ") + "]"
			}
			alts = append(alts, scheme)
		}
	}
	slices.Sort(alts)
	return strings.Join(alts, " ")
}

// ourParams are the document's parameters of an operation, resolved.
func ourParams(op, doc map[string]any) []selfdoc.Param {
	list, _ := op["parameters"].([]any)
	var out []selfdoc.Param
	for _, item := range list {
		p := item.(map[string]any)
		if ref, ok := p["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/parameters/")
			p = doc["components"].(map[string]any)["parameters"].(map[string]any)[name].(map[string]any)
		}
		req, _ := p["required"].(bool)
		out = append(out, selfdoc.Param{Name: p["name"].(string), In: p["in"].(string), Required: req})
	}
	return out
}

// checkResponses checks the operation's responses are the platform's, and
// every component they refer to, transitively, is the platform's too.
func checkResponses(t *testing.T, ours, theirs map[string]any, doc map[string]any, platform *selfdoc.Platform) {
	t.Helper()
	if !reflect.DeepEqual(ours["responses"], theirs["responses"]) {
		t.Errorf("responses differ from the platform's:\n got %s\nwant %s", compact(ours["responses"]), compact(theirs["responses"]))
	}
	components := doc["components"].(map[string]any)
	seen := map[string]bool{}
	var visit func(v any)
	visit = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && !seen[ref] {
				seen[ref] = true
				kind, name, _ := strings.Cut(strings.TrimPrefix(ref, "#/components/"), "/")
				got, _ := components[kind].(map[string]any)[name]
				if want := platform.Component(kind, name); !reflect.DeepEqual(got, any(want)) {
					t.Errorf("component %s differs from the platform's", ref)
				}
				visit(got)
			}
			for _, c := range x {
				visit(c)
			}
		case []any:
			for _, c := range x {
				visit(c)
			}
		}
	}
	visit(ours["responses"])
}

func compact(v any) string {
	raw, _ := json.Marshal(v)
	return fmt.Sprintf("%.600s", raw)
}

// TestServedDocsView: GET /_aviary/docs, without credentials, is a
// self-contained HTML page listing every described operation.
func TestServedDocsView(t *testing.T) {
	_, _, described, _, b := servedDescription(t)
	r := b.Call(t, "GET", api.DocsPath, "", "", nil)
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s", api.DocsPath, r.Status, r.Header.Get("Content-Type"))
	}
	for _, op := range described {
		method, path, _ := strings.Cut(op, " ")
		if !strings.Contains(r.Raw, `id="`+method+"-"+path+`"`) {
			t.Errorf("%s is not listed", op)
		}
	}
	for _, external := range []string{"<script", "src=\"http", "href=\"http", "@import"} {
		if strings.Contains(r.Raw, external) {
			t.Errorf("the page loads something (%q): it must be self-contained", external)
		}
	}
}
