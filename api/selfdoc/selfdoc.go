// Package selfdoc builds the OpenAPI 3.0 description Aviary serves of
// itself (GET /2/openapi.json) and a rendered view of it (GET
// /_aviary/docs): exactly the endpoints of the route table, with their
// parameters, credentials, rate limits and response schemas. Where the
// platform's own description (given at start-up, docs/openapi.md) has the
// same operation, its response schemas are used, so clients generated from
// either agree; elsewhere the schema comes from the endpoint's typed
// response (Endpoint.Response, by reflection) or is a documented minimal
// one.
package selfdoc

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
)

// Surfaces group the operations (the document's tags).
const (
	SurfaceCore   = "core"
	SurfaceAds    = "ads"
	SurfaceAviary = "aviary"
)

// Options are what the document says beyond the route table.
type Options struct {
	// Version is Aviary's build version (info.version).
	Version string
	// ServerURL is the public base URL (servers[0]); empty leaves the
	// document relative to where it is served.
	ServerURL string
	// Platform is the platform's OpenAPI description (JSON); nil builds
	// every schema from Aviary's own types.
	Platform *Platform
}

// Document is a generated description: its JSON and the operations the
// rendered view lists.
type Document struct {
	JSON       []byte
	Operations []Operation
}

// Operation is one method on one path, as the rendered view lists it.
type Operation struct {
	Method, Path, Surface string
	// Credentials names the accepted credential kinds ("none" for public).
	Credentials []string
	Scopes      []string
	Query       []string
	RateLimit   string
	// Platform is true when the schemas are the platform's.
	Platform bool
}

// Build describes endpoints (the route table of one listener).
func Build(endpoints []httpx.Endpoint, opt Options) (*Document, error) {
	b := &builder{opt: opt, components: map[string]map[string]any{"schemas": {}, "parameters": {}}, scopes: map[string]bool{}}
	paths := map[string]map[string]any{}
	var ops []Operation
	for _, e := range endpoints {
		method, path, err := SplitPattern(e.Pattern)
		if err != nil {
			return nil, err
		}
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		key := strings.ToLower(method)
		if paths[path][key] != nil {
			return nil, fmt.Errorf("selfdoc: %s is listed twice", e.Pattern)
		}
		op, view, err := b.operation(method, path, e)
		if err != nil {
			return nil, err
		}
		paths[path][key] = op
		ops = append(ops, view)
	}
	raw, err := json.MarshalIndent(b.document(paths), "", " ")
	if err != nil {
		return nil, fmt.Errorf("selfdoc: encode: %w", err)
	}
	slices.SortFunc(ops, func(a, b Operation) int {
		return strings.Compare(a.Surface+a.Path+a.Method, b.Surface+b.Path+b.Method)
	})
	return &Document{JSON: raw, Operations: ops}, nil
}

// SplitPattern splits a ServeMux pattern "METHOD /path/{id}" into the
// method and the OpenAPI path ("{id...}" becomes "{id}", a trailing
// "{$}" is dropped).
func SplitPattern(pattern string) (method, path string, err error) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return "", "", fmt.Errorf("selfdoc: pattern %q has no method and path", pattern)
	}
	path = strings.TrimSuffix(path, "{$}")
	path = strings.ReplaceAll(path, "...}", "}")
	return method, path, nil
}

// PathParams are the wildcards of an OpenAPI path, in order.
func PathParams(path string) []string {
	var names []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, seg[1:len(seg)-1])
		}
	}
	return names
}

// SurfaceOf is the surface a path belongs to.
func SurfaceOf(path string) string {
	switch {
	case strings.HasPrefix(path, "/_aviary/"):
		return SurfaceAviary
	case strings.HasPrefix(path, "/2/"):
		return SurfaceCore
	}
	return SurfaceAds
}

type builder struct {
	opt        Options
	components map[string]map[string]any
	scopes     map[string]bool
}

func (b *builder) document(paths map[string]map[string]any) map[string]any {
	info := map[string]any{
		"title":   "Aviary",
		"version": orDefault(b.opt.Version, "dev"),
		"description": "The endpoints this Aviary server serves: the core API (/2/...), the advertising API " +
			"(/12/..., /5/...) and Aviary's own endpoints (/_aviary/...). Generated from its route table (docs/openapi.md).",
	}
	if b.opt.Platform != nil {
		info["x-aviary-platform-description"] = b.opt.Platform.Version
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    info,
		"paths":   paths,
		"tags": []map[string]any{
			{"name": SurfaceCore, "description": "The core API."},
			{"name": SurfaceAds, "description": "The advertising API."},
			{"name": SurfaceAviary, "description": "Aviary's own endpoints (not on the platform)."},
		},
		"components": map[string]any{
			"schemas":         b.components["schemas"],
			"parameters":      b.components["parameters"],
			"securitySchemes": b.securitySchemes(),
		},
	}
	if b.opt.ServerURL != "" {
		doc["servers"] = []map[string]any{{"url": strings.TrimSuffix(b.opt.ServerURL, "/")}}
	}
	return doc
}

// securitySchemes are the platform's three credential kinds, under the
// platform's names; the OAuth 2.0 scopes are those the endpoints need.
func (b *builder) securitySchemes() map[string]any {
	scopes := map[string]any{}
	for s := range b.scopes {
		scopes[s] = "OAuth 2.0 scope " + s + "."
	}
	return map[string]any{
		"BearerToken": map[string]any{"type": "http", "scheme": "bearer",
			"description": "An app-only OAuth 2.0 bearer token."},
		"UserToken": map[string]any{"type": "http", "scheme": "OAuth",
			"description": "An OAuth 1.0a user-context HMAC-SHA1 signature."},
		"OAuth2UserToken": map[string]any{"type": "oauth2",
			"description": "An OAuth 2.0 user access token (authorization code with PKCE).",
			"flows": map[string]any{"authorizationCode": map[string]any{
				"authorizationUrl": b.url("/i/oauth2/authorize"),
				"tokenUrl":         b.url("/2/oauth2/token"),
				"scopes":           scopes,
			}}},
	}
}

func (b *builder) url(path string) string {
	if b.opt.ServerURL == "" {
		return "http://localhost:8080" + path
	}
	return strings.TrimSuffix(b.opt.ServerURL, "/") + path
}

// operation describes e on method and path.
func (b *builder) operation(method, path string, e httpx.Endpoint) (map[string]any, Operation, error) {
	surface := SurfaceOf(path)
	platform := b.platformOp(method, path)
	op := map[string]any{
		"operationId": operationID(method, path),
		"tags":        []string{surface},
		"summary":     method + " " + path,
		"parameters":  b.parameters(path, e.Query, platform),
		"security":    b.security(e.Auth),
		"responses":   b.responses(surface, e, platform),
	}
	view := Operation{Method: method, Path: path, Surface: surface, Query: e.Query, Scopes: e.Auth.Scopes, Platform: platform != nil}
	for _, c := range e.Auth.Accept {
		view.Credentials = append(view.Credentials, string(c))
	}
	if e.Auth.Public {
		op["x-aviary-signed-url"] = true
		view.Credentials = []string{"signed URL"}
	}
	if len(view.Credentials) == 0 {
		view.Credentials = []string{"none"}
	}
	if e.Auth.Write {
		op["x-aviary-writes"] = true
	}
	if rl := rateLimit(e.Limit); rl != nil {
		op["x-rate-limit"] = rl
		view.RateLimit = fmt.Sprintf("%d per %s, per %s", e.Limit.Requests, human(windowOf(e.Limit)), e.Limit.Scope)
	}
	if body := b.requestBody(e.Body, platform); body != nil {
		op["requestBody"] = body
	}
	return op, view, nil
}

// operationID is unique per method and path: "get_2_tweets_id".
func operationID(method, path string) string {
	var sb strings.Builder
	sb.WriteString(strings.ToLower(method))
	for _, r := range path {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		case r == '/':
			sb.WriteByte('_')
		case r == '_' || r == '-' || r == '.':
			sb.WriteByte('_')
		}
	}
	return sb.String()
}

// security is the requirement as OpenAPI security alternatives: any one
// accepted credential kind. A public endpoint (a signed URL) and a route
// without credentials have none.
func (b *builder) security(req auth.Requirement) []map[string][]string {
	out := []map[string][]string{}
	for _, c := range req.Accept {
		switch c {
		case auth.AppOnly:
			out = append(out, map[string][]string{"BearerToken": {}})
		case auth.OAuth1User:
			out = append(out, map[string][]string{"UserToken": {}})
		case auth.OAuth2User:
			scopes := slices.Clone(req.Scopes)
			if scopes == nil {
				scopes = []string{}
			}
			for _, s := range scopes {
				b.scopes[s] = true
			}
			out = append(out, map[string][]string{"OAuth2UserToken": scopes})
		}
	}
	return out
}

// rateLimit is the x-rate-limit extension of l; nil when unlimited.
func rateLimit(l httpx.Limit) map[string]any {
	if l.Name == "" {
		return nil
	}
	rl := map[string]any{
		"name":           l.Name,
		"requests":       l.Requests,
		"window_seconds": int(windowOf(l).Seconds()),
		"scope":          l.Scope.String(),
		"headers":        orDefault(l.Headers, "x-rate-limit"),
	}
	if l.When != nil {
		rl["conditional"] = true
	}
	var also []map[string]any
	for _, a := range l.Also {
		if x := rateLimit(httpx.Limit{Name: a.Name, Requests: a.Requests, Window: a.Window, Scope: a.Scope, Headers: a.Headers}); x != nil {
			also = append(also, x)
		}
	}
	if also != nil {
		rl["also"] = also
	}
	return rl
}

// human spells a window: "15 minutes", "24 hours".
func human(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// windowOf is l's window (default the platform's 15 minutes).
func windowOf(l httpx.Limit) time.Duration {
	if l.Window == 0 {
		return httpx.Window
	}
	return l.Window
}

// requestBody describes the accepted body: the platform's where it has
// one, else a schema per accepted media type.
func (b *builder) requestBody(body httpx.Body, platform map[string]any) map[string]any {
	if len(body.Types) == 0 {
		return nil
	}
	if rb, ok := platform["requestBody"].(map[string]any); ok {
		out := b.copyPlatform(rb).(map[string]any)
		out["x-max-bytes"] = maxBytes(body)
		return out
	}
	content := map[string]any{}
	for _, t := range body.Types {
		schema := map[string]any{"type": "object"}
		if t != httpx.ContentJSON && t != httpx.ContentForm {
			schema = map[string]any{"type": "string", "format": "binary"}
		}
		content[t] = map[string]any{"schema": schema}
	}
	return map[string]any{"content": content, "x-max-bytes": maxBytes(body)}
}

func maxBytes(body httpx.Body) int64 {
	if body.MaxBytes > 0 {
		return body.MaxBytes
	}
	return httpx.DefaultMaxBody
}

// parameters are the path wildcards and the query parameters the endpoint
// takes; on an operation the platform describes, a parameter it also has
// (same name and place) is its definition.
func (b *builder) parameters(path string, query []string, platform map[string]any) []any {
	known := map[string]map[string]any{}
	if b.opt.Platform != nil && platform != nil {
		for _, p := range b.opt.Platform.Parameters(platform) {
			known[p.In+" "+p.Name] = p.Raw
		}
	}
	params := []any{}
	add := func(name, in string, required bool) {
		if raw, ok := known[in+" "+name]; ok {
			params = append(params, b.copyPlatform(raw))
			return
		}
		p := map[string]any{"name": name, "in": in, "schema": paramSchema(SurfaceOf(path), in, name)}
		if required {
			p["required"] = true
		}
		params = append(params, p)
	}
	for _, name := range PathParams(path) {
		add(name, "path", true)
	}
	for _, name := range query {
		add(name, "query", false)
	}
	return params
}

// kitParams are the schemas of the query parameters the kits read the
// same way on every endpoint (httpx.Query on /2/ and /_aviary/, the ads
// kit's list parameters, adsx.ListParams, on the ads paths); every other
// parameter is a string. Bounds that vary by endpoint (max_results,
// count's maximum) live in the handlers and are not stated.
var kitParams = map[string]map[string]map[string]any{
	SurfaceAds: {
		"count":            {"type": "integer", "minimum": 1},
		"cursor":           {"type": "string"},
		"with_deleted":     {"type": "boolean"},
		"with_total_count": {"type": "boolean"},
	},
	SurfaceCore: {
		"max_results":      {"type": "integer", "minimum": 1},
		"pagination_token": {"type": "string"},
	},
	SurfaceAviary: {
		"max_results":      {"type": "integer", "minimum": 1},
		"pagination_token": {"type": "string"},
	},
}

// paramSchema is a parameter's schema: the kit's where it knows the
// name, else a string.
func paramSchema(surface, in, name string) map[string]any {
	if s, ok := kitParams[surface][name]; ok && in == "query" {
		return deepCopy(toAny(s)).(map[string]any)
	}
	return map[string]any{"type": "string"}
}

// responses are the platform's for an operation it describes, else the
// typed response (Endpoint.Response) or the surface's minimal schema, with
// the surface's error body as the default.
func (b *builder) responses(surface string, e httpx.Endpoint, platform map[string]any) map[string]any {
	if r, ok := platform["responses"].(map[string]any); ok {
		return b.copyPlatform(r).(map[string]any)
	}
	success := map[string]any{"type": "object"}
	if e.Response != nil {
		success = b.schemaOf(e.Response)
	} else if surface == SurfaceAds {
		success = b.ownComponent("AviaryAdsEnvelope")
	}
	errBody := b.ownComponent("AviaryProblem")
	errType := "application/problem+json"
	if surface == SurfaceAds {
		errBody = b.ownComponent("AviaryAdsErrors")
		errType = "application/json"
	}
	return map[string]any{
		"200": map[string]any{"description": "The request has succeeded.",
			"content": map[string]any{"application/json": map[string]any{"schema": success}}},
		"default": map[string]any{"description": "The request has failed.",
			"content": map[string]any{errType: map[string]any{"schema": errBody}}},
	}
}

// platformOp is the platform's operation on method and path, nil when it
// has none (or no description was given).
func (b *builder) platformOp(method, path string) map[string]any {
	if b.opt.Platform == nil {
		return nil
	}
	return b.opt.Platform.Operation(method, path)
}

// copyPlatform deep-copies a part of the platform's description and the
// components it refers to, transitively, into the document.
func (b *builder) copyPlatform(v any) any {
	out := deepCopy(v)
	for _, ref := range refsIn(out) {
		b.addPlatformComponent(ref)
	}
	return out
}

func (b *builder) addPlatformComponent(ref string) {
	kind, name, ok := splitRef(ref)
	if !ok || b.components[kind] == nil || b.components[kind][name] != nil {
		return
	}
	c := b.opt.Platform.Component(kind, name)
	if c == nil {
		return
	}
	c = deepCopy(c).(map[string]any)
	b.components[kind][name] = c
	for _, r := range refsIn(c) {
		b.addPlatformComponent(r)
	}
}

// HandlerJSON serves the document.
func (d *Document) HandlerJSON() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(d.JSON)
	})
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
