package selfdoc

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
)

type widget struct {
	ID      string     `json:"id"`
	Name    string     `json:"name,omitempty"`
	Count   int        `json:"count"`
	Seen    *time.Time `json:"seen,omitempty"`
	Tags    []string   `json:"tags"`
	skipped string
	Hidden  string `json:"-"`
}

type widgetPage struct {
	Data []widget `json:"data"`
	Meta struct {
		ResultCount int `json:"result_count"`
	} `json:"meta"`
}

// platformFixture is a tiny description in the platform's shape: one
// operation whose response and parameter refer to components, one of them
// referring on to another.
const platformFixture = `{
 "openapi": "3.0.0", "info": {"title": "fixture", "version": "9.9"},
 "paths": {"/2/widgets/{id}": {"get": {
   "parameters": [
     {"name": "id", "in": "path", "required": true, "schema": {"$ref": "#/components/schemas/WidgetId"}},
     {"$ref": "#/components/parameters/FieldsParameter"}
   ],
   "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WidgetResponse"}}}}}
 }}},
 "components": {
   "schemas": {
     "WidgetId": {"type": "string", "pattern": "^[0-9]{1,19}$"},
     "WidgetResponse": {"type": "object", "properties": {"data": {"$ref": "#/components/schemas/Widget"}}},
     "Widget": {"type": "object", "properties": {"id": {"$ref": "#/components/schemas/WidgetId"}}},
     "Unused": {"type": "string"}
   },
   "parameters": {
     "FieldsParameter": {"name": "widget.fields", "in": "query", "required": false, "schema": {"type": "array", "items": {"type": "string"}, "minItems": 1}}
   }
 }
}`

func endpoints() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "GET /2/widgets/{id}", Auth: auth.AppOrUser.Needs("widget.read"), Query: []string{"widget.fields", "extra"},
			Limit: httpx.Limit{Name: "widget", Requests: 300, Scope: httpx.PerUser}},
		{Pattern: "POST /2/widgets", Auth: auth.UserContext.Writes().Needs("widget.write"), Body: httpx.JSONBody(4096),
			Limit: httpx.Limit{Name: "widget_post", Requests: 10, Scope: httpx.PerUser,
				Also: []httpx.Limit{{Name: "widget_day", Requests: 100, Window: 24 * time.Hour, Scope: httpx.PerApp, Headers: httpx.HeadersApp24Hour}}}},
		{Pattern: "GET /_aviary/widgets", Auth: auth.BearerOnly, Query: []string{"max_results"}, Response: widgetPage{}},
		{Pattern: "GET /12/accounts/{account_id}/widgets", Auth: auth.OAuth1Only, Query: []string{"count", "with_deleted", "sort_by"}},
		{Pattern: "PUT /12/accounts/{account_id}/widgets/{widget_id}", Auth: auth.OAuth1Only.Writes(), Body: httpx.Body{Types: []string{httpx.ContentForm}}},
		{Pattern: "PUT /2/uploads/{id}", Auth: auth.Signed(func(*http.Request) error { return nil }),
			Body: httpx.Body{MaxBytes: 1 << 30, Types: []string{"text/plain"}}},
		{Pattern: "GET /_aviary/open/{$}"},
	}
}

// build builds the document of endpoints and decodes it, after checking
// it is a valid OpenAPI 3 document.
func build(t *testing.T, platform *Platform) (*Document, map[string]any) {
	t.Helper()
	d, err := Build(endpoints(), Options{Version: "1.2.3", ServerURL: "https://aviary.example/", Platform: platform})
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := openapi3.NewLoader().LoadFromData(d.JSON)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if err := loaded.Validate(t.Context()); err != nil {
		t.Fatalf("validate: %v\n%s", err, d.JSON)
	}
	var doc map[string]any
	if err := json.Unmarshal(d.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	return d, doc
}

// at walks doc along keys.
func at(doc any, keys ...string) any {
	for _, k := range keys {
		m, _ := doc.(map[string]any)
		doc = m[k]
	}
	return doc
}

func jsonOf(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}

func TestBuildWithoutPlatform(t *testing.T) {
	d, doc := build(t, nil)
	tests := []struct {
		name string
		got  any
		want string
	}{
		{"version", at(doc, "info", "version"), `"1.2.3"`},
		{"server", at(doc, "servers"), `[{"url":"https://aviary.example"}]`},
		{"any credential kind, scopes on OAuth 2.0", at(doc, "paths", "/2/widgets/{id}", "get", "security"),
			`[{"BearerToken":[]},{"UserToken":[]},{"OAuth2UserToken":["widget.read"]}]`},
		{"user context", at(doc, "paths", "/2/widgets", "post", "security"), `[{"UserToken":[]},{"OAuth2UserToken":["widget.write"]}]`},
		{"signed URL: no credentials", at(doc, "paths", "/2/uploads/{id}", "put", "security"), `[]`},
		{"signed URL marked", at(doc, "paths", "/2/uploads/{id}", "put", "x-aviary-signed-url"), `true`},
		{"no credentials", at(doc, "paths", "/_aviary/open/", "get", "security"), `[]`},
		{"ads: OAuth 1.0a", at(doc, "paths", "/12/accounts/{account_id}/widgets/{widget_id}", "put", "security"), `[{"UserToken":[]}]`},
		{"writes", at(doc, "paths", "/2/widgets", "post", "x-aviary-writes"), `true`},
		{"rate limit", at(doc, "paths", "/2/widgets/{id}", "get", "x-rate-limit"),
			`{"headers":"x-rate-limit","name":"widget","requests":300,"scope":"user","window_seconds":900}`},
		{"rate limit with a 24-hour one", at(doc, "paths", "/2/widgets", "post", "x-rate-limit", "also"),
			`[{"headers":"X-App-Limit-24hour","name":"widget_day","requests":100,"scope":"app","window_seconds":86400}]`},
		{"parameters: path then query", at(doc, "paths", "/2/widgets/{id}", "get", "parameters"),
			`[{"in":"path","name":"id","required":true,"schema":{"type":"string"}},{"in":"query","name":"widget.fields","schema":{"type":"string"}},{"in":"query","name":"extra","schema":{"type":"string"}}]`},
		{"two path parameters", at(doc, "paths", "/12/accounts/{account_id}/widgets/{widget_id}", "put", "parameters"),
			`[{"in":"path","name":"account_id","required":true,"schema":{"type":"string"}},{"in":"path","name":"widget_id","required":true,"schema":{"type":"string"}}]`},
		{"kit parameters", at(doc, "paths", "/12/accounts/{account_id}/widgets", "get", "parameters"),
			`[{"in":"path","name":"account_id","required":true,"schema":{"type":"string"}},{"in":"query","name":"count","schema":{"minimum":1,"type":"integer"}},` +
				`{"in":"query","name":"with_deleted","schema":{"type":"boolean"}},{"in":"query","name":"sort_by","schema":{"type":"string"}}]`},
		{"JSON body", at(doc, "paths", "/2/widgets", "post", "requestBody"),
			`{"content":{"application/json":{"schema":{"type":"object"}}},"x-max-bytes":4096}`},
		{"raw body", at(doc, "paths", "/2/uploads/{id}", "put", "requestBody", "content"),
			`{"text/plain":{"schema":{"format":"binary","type":"string"}}}`},
		{"typed response", at(doc, "paths", "/_aviary/widgets", "get", "responses", "200", "content", "application/json", "schema"),
			`{"properties":{"data":{"items":{"properties":{"count":{"type":"integer"},"id":{"type":"string"},"name":{"type":"string"},` +
				`"seen":{"format":"date-time","nullable":true,"type":"string"},"tags":{"items":{"type":"string"},"type":"array"}},` +
				`"required":["id","count","tags"],"type":"object"},"type":"array"},` +
				`"meta":{"properties":{"result_count":{"type":"integer"}},"required":["result_count"],"type":"object"}},"required":["data","meta"],"type":"object"}`},
		{"core error", at(doc, "paths", "/2/widgets", "post", "responses", "default", "content"),
			`{"application/problem+json":{"schema":{"$ref":"#/components/schemas/AviaryProblem"}}}`},
		{"ads answer", at(doc, "paths", "/12/accounts/{account_id}/widgets/{widget_id}", "put", "responses", "200", "content"),
			`{"application/json":{"schema":{"$ref":"#/components/schemas/AviaryAdsEnvelope"}}}`},
		{"ads error", at(doc, "paths", "/12/accounts/{account_id}/widgets/{widget_id}", "put", "responses", "default", "content"),
			`{"application/json":{"schema":{"$ref":"#/components/schemas/AviaryAdsErrors"}}}`},
		{"scopes in the scheme", at(doc, "components", "securitySchemes", "OAuth2UserToken", "flows", "authorizationCode"),
			`{"authorizationUrl":"https://aviary.example/i/oauth2/authorize","scopes":{"widget.read":"OAuth 2.0 scope widget.read.","widget.write":"OAuth 2.0 scope widget.write."},"tokenUrl":"https://aviary.example/2/oauth2/token"}`},
		{"no platform version", at(doc, "info", "x-aviary-platform-description"), `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsonOf(tt.got); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if len(d.Operations) != len(endpoints()) {
		t.Errorf("%d operations listed, want %d", len(d.Operations), len(endpoints()))
	}
}

func TestBuildWithPlatform(t *testing.T) {
	p, err := ParsePlatform([]byte(platformFixture))
	if err != nil {
		t.Fatal(err)
	}
	_, doc := build(t, p)
	fixture := map[string]any{}
	if err := json.Unmarshal([]byte(platformFixture), &fixture); err != nil {
		t.Fatal(err)
	}
	op := at(doc, "paths", "/2/widgets/{id}", "get")
	theirs := at(fixture, "paths", "/2/widgets/{id}", "get")
	if !reflect.DeepEqual(at(op, "responses"), at(theirs, "responses")) {
		t.Errorf("responses are not the platform's: %s", jsonOf(at(op, "responses")))
	}
	params := at(op, "parameters").([]any)
	want := at(theirs, "parameters").([]any)
	if len(params) != 3 || !reflect.DeepEqual(params[:2], want) {
		t.Errorf("parameters: got %s, want the platform's two then extra", jsonOf(params))
	}
	for _, c := range []string{"schemas/WidgetId", "schemas/WidgetResponse", "schemas/Widget", "parameters/FieldsParameter"} {
		kind, name, _ := strings.Cut(c, "/")
		if !reflect.DeepEqual(at(doc, "components", kind, name), at(fixture, "components", kind, name)) {
			t.Errorf("component %s is not the platform's: %s", c, jsonOf(at(doc, "components", kind, name)))
		}
	}
	if at(doc, "components", "schemas", "Unused") != nil {
		t.Error("a component no operation refers to was copied")
	}
	if got := at(doc, "info", "x-aviary-platform-description"); got != "9.9" {
		t.Errorf("platform version %v", got)
	}
	// An operation the platform does not have keeps Aviary's schemas.
	if got := jsonOf(at(doc, "paths", "/2/widgets", "post", "responses", "default", "content")); !strings.Contains(got, "AviaryProblem") {
		t.Errorf("POST /2/widgets: %s", got)
	}
}

func TestBuildRefuses(t *testing.T) {
	tests := []struct {
		name      string
		endpoints []httpx.Endpoint
		want      string
	}{
		{"twice", []httpx.Endpoint{{Pattern: "GET /2/a"}, {Pattern: "GET /2/a"}}, "listed twice"},
		{"no method", []httpx.Endpoint{{Pattern: "/2/a"}}, "no method and path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Build(tt.endpoints, Options{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := ParsePlatform([]byte(`{"paths":{}}`)); err == nil {
		t.Error("a description without paths was taken")
	}
}

func TestSplitPattern(t *testing.T) {
	tests := []struct{ pattern, method, path string }{
		{"GET /2/tweets/{id}", "GET", "/2/tweets/{id}"},
		{"GET /blobs/{key...}", "GET", "/blobs/{key}"},
		{"GET /_aviary/{$}", "GET", "/_aviary/"},
	}
	for _, tt := range tests {
		m, p, err := SplitPattern(tt.pattern)
		if err != nil || m != tt.method || p != tt.path {
			t.Errorf("%s: %s %s %v", tt.pattern, m, p, err)
		}
	}
}

func TestHTML(t *testing.T) {
	d, _ := build(t, nil)
	page, err := d.HTML("1.2.3", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="GET-/2/widgets/{id}"`, "widget.read", "300 per 15 minutes, per user", "Advertising API (2)", `href="/2/openapi.json"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
