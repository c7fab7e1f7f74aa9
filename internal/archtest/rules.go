// Package archtest checks the import rules of the Aviary layout
// (docs/architecture.md, "Import rules") on every `make test`.
//
// The rules are the table Rules below; Check applies it to a list of
// packages and Load produces that list with `go list`. For every import the
// first rule it breaks, in table order, is reported, so specific rules come
// before the broad allow-lists that would also catch the import.
//
// ScanSQL (sql.go) checks the other half of the tiers' seam: no string
// literal of the API tier holds a column or a SQL fragment.
package archtest

import (
	"slices"
	"strings"
)

// Module is the import path of the module whose layout is checked.
const Module = "github.com/aviary-dev/aviary"

// Files says which files of a package a rule looks at.
type Files uint8

const (
	// Code is the package's non-test files (go list Imports).
	Code Files = 1 << iota
	// Tests is its _test.go files, internal and external (go list
	// TestImports and XTestImports).
	Tests
	// All is both.
	All = Code | Tests
)

// Rule is one line of the layout: the packages it applies to, the files it
// reads, and either the imports it forbids (Deny) or the only ones it permits
// (Allow). Reason is printed with every violation.
type Rule struct {
	Name   string
	Pkgs   Set
	Files  Files
	Deny   Set
	Allow  Set
	Reason string
}

// Rules is the layout, checked in order; see the package doc.
var Rules = []Rule{
	{Name: "nothing-imports-cmd", Pkgs: inModule, Files: All,
		Deny:   tree("cmd"),
		Reason: "nothing imports cmd: it only wires the binary (layout.md)"},
	{Name: "api-not-workers", Pkgs: tree("api"), Files: All,
		Deny:   tree("workers"),
		Reason: "api never imports workers: the tiers meet only in tasks and storage (layout.md)"},
	{Name: "workers-not-api", Pkgs: tree("workers"), Files: All,
		Deny:   tree("api"),
		Reason: "workers never import api: the tiers meet only in tasks and storage (layout.md)"},
	{Name: "tasks-leaf", Pkgs: pkgs("tasks"), Files: All,
		Allow:  anyOf(std, ext("github.com/hibiken/asynq")),
		Reason: "tasks is a leaf: standard library and asynq only (layout.md)"},
	{Name: "validation-leaf", Pkgs: pkgs("validation"), Files: All,
		Allow:  anyOf(std, ext("github.com/go-playground/validator/v10")),
		Reason: "validation is a leaf: standard library and validator/v10 only (layout.md)"},
	// domain holds the platform's own rules that both tiers share (post
	// text, the search query language, product catalogs, stream rules): it
	// sees records, events and validation, never a tier, a driver or the
	// queue.
	{Name: "domain-rules", Pkgs: tree("domain"), Files: All,
		Allow:  anyOf(std, pkgs("storage", "storage/ids", "validation", "events"), tree("domain"), ext("github.com/go-playground/validator/v10")),
		Reason: "domain holds rules both tiers share: standard library, the storage records, storage/ids, validation (validator/v10), events (a leaf: stream rules match its payloads) and other domain packages only (docs/architecture.md)"},
	// ops holds the domain operations both tiers share (create, edit,
	// delete a post: each one transaction that also appends its events):
	// api features and workers call it, it calls neither (docs/events.md).
	{Name: "ops-not-tiers", Pkgs: tree("ops"), Files: All,
		Deny:   tree("api", "workers"),
		Reason: "ops never imports api or workers: both tiers call the operations, not the other way round (docs/events.md)"},
	{Name: "ops-home", Pkgs: tree("ops"), Files: Code,
		Allow:  anyOf(std, pkgs("storage", "storage/ids", "events", "validation"), tree("domain", "ops")),
		Reason: "ops holds the operations both tiers share: standard library, the storage records, storage/ids, events, domain/..., validation and other ops packages only (docs/events.md)"},
	// render renders posts, users and media as the API shows them for
	// both tiers (the API's endpoints, the filtered stream, the workers'
	// webhook stream links): it reads records through its own store
	// interface and knows no request, no API error and no tier.
	{Name: "render-not-tiers", Pkgs: tree("render"), Files: All,
		Deny:   tree("api", "workers"),
		Reason: "render never imports api or workers: both tiers render through it, not the other way round (docs/architecture.md)"},
	{Name: "render-home", Pkgs: tree("render"), Files: Code,
		Allow:  anyOf(std, pkgs("storage", "storage/ids", "events"), tree("domain", "render")),
		Reason: "render holds the object renderer both tiers share: standard library, the storage records, storage/ids, events and domain/... only (docs/architecture.md)"},
	// web is the HTML tier beside api (login and consent pages, the
	// console): it renders pages from the shared rules, operations and
	// records, never through api's features or kit, and nothing but cmd
	// (and the end-to-end tests) mounts it.
	{Name: "web-not-tiers", Pkgs: tree("web"), Files: All,
		Deny:   tree("api", "workers"),
		Reason: "web never imports api or workers: it is a tier of its own beside api (docs/architecture.md)"},
	{Name: "web-home", Pkgs: tree("web"), Files: Code,
		Allow:  anyOf(std, pkgs("storage", "storage/ids", "events"), tree("domain", "ops", "render", "web"), below("internal"), ext("github.com/redis/go-redis", "golang.org/x/crypto")),
		Reason: "web imports the standard library, the storage records, storage/ids, events, domain/..., ops/..., render, internal/..., go-redis (sessions, throttles) and x/crypto (passwords) only (docs/architecture.md)"},
	{Name: "web-cmd-only", Pkgs: except(inModule, tree("web", "cmd", "internal/e2e")), Files: All,
		Deny:   tree("web"),
		Reason: "only cmd wires the web tier; no other package imports it (docs/architecture.md)"},
	{Name: "storage-no-drivers", Pkgs: pkgs("storage"), Files: All,
		Deny:   anyOf(tree("storage/postgres", "storage/blob"), driverModules),
		Reason: "the storage root knows no drivers: no postgres, blob, pgx, AWS SDK or minio-go (layout.md)"},
	{Name: "drivers-no-handlers", Pkgs: tree("storage/postgres", "storage/blob"), Files: All,
		Deny:   tree("api", "workers"),
		Reason: "storage drivers know no API handlers and no queue handlers (layout.md)"},
	// The test kits build the whole API, so they import every feature; a
	// feature's external tests may import them (featureTestKit), code never.
	{Name: "test-kits-tests-only", Pkgs: inModule, Files: Code,
		Deny:   testKits,
		Reason: "api/apitest, api/ads/adstest and internal/outbound/outboundtest are test kits: only _test.go files import them (docs/architecture.md)"},
	{Name: "features-not-features", Pkgs: feature, Files: All,
		Deny:   feature,
		Reason: "feature packages never import each other (layout.md)"},
	{Name: "features-not-api-root", Pkgs: feature, Files: Code,
		Deny:   pkgs("api"),
		Reason: "the api root assembles the features; a feature never imports it (layout.md)"},
	{Name: "features-no-drivers", Pkgs: feature, Files: Code,
		Deny:   anyOf(tree("storage/postgres"), below("storage/blob")),
		Reason: "a feature talks to its own narrow store interface, never a storage driver (layout.md)"},
	{Name: "features-no-ratelimit", Pkgs: feature, Files: Code,
		Deny:   pkgs("api/ratelimit"),
		Reason: "a feature sets Endpoint.Limit; only api/httpx uses api/ratelimit (layout.md)"},
	{Name: "adsx-ads-only", Pkgs: except(feature, below("api/ads")), Files: All,
		Deny:   pkgs("api/ads/adsx"),
		Reason: "api/ads/adsx is the ads kit: only features under api/ads import it (layout.md)"},
	{Name: "feature-imports", Pkgs: feature, Files: Code,
		Allow:  anyOf(outside, featureKit),
		Reason: "a feature imports only api/httpx, api/objects, render, api/apierr, api/auth, storage, storage/ids, storage/blob, domain/..., ops/..., tasks, validation, events, events/bus, internal/outbound (ads: api/ads/adsx) (layout.md)"},
	{Name: "feature-test-imports", Pkgs: feature, Files: Tests,
		Allow:  anyOf(outside, featureKit, featureTestKit),
		Reason: "feature tests add only storage/storagetest, storage/postgres, storage/blob/local, storage/faultsredis, internal/outbound/outboundtest, the api root and kit (layout.md)"},
	{Name: "domains-not-workers-root", Pkgs: workerDomain, Files: All,
		Deny:   pkgs("workers"),
		Reason: "the workers root registers the domains; a domain never imports it (layout.md)"},
	{Name: "domains-not-domains", Pkgs: workerDomain, Files: All,
		Deny:   workerDomain,
		Reason: "worker domains never import each other; share through workers/sweep, tasks or storage (layout.md)"},
	{Name: "internal-leaves", Pkgs: except(below("internal"), tree("internal/e2e", "internal/archtest")), Files: All,
		Allow:  anyOf(std, pkgs("internal/outbound/outboundtest")),
		Reason: "internal packages other than e2e and archtest are leaves: standard library only (and the guarded client's test targets, internal/outbound/outboundtest) (layout.md)"},
}

// apiKit are the shared packages of the api tier; every other package
// api/X or api/X/Y is a feature.
var apiKit = pkgs("api", "api/httpx", "api/objects", "api/apierr", "api/auth", "api/ratelimit", "api/ads", "api/ads/adsx", "api/ads/adstest", "api/apitest")

// testKits run the whole API for tests (see the rule test-kits-tests-only).
var testKits = pkgs("api/apitest", "api/ads/adstest", "internal/outbound/outboundtest")

// featureKit are the module packages a feature may import.
// render (the object renderer both tiers share) is the one package outside
// api, storage and the shared rules a feature renders with: api/objects
// reads a request into its Options (docs/posts-fields.md).
// events (the log's contract, a leaf) and events/bus (the Redis transport of
// matches and connection controls) serve api/streams, whose hub routes the
// dispatcher's matches to the streams a replica holds (docs/streams.md).
// internal/outbound (the one guarded HTTP client, a standard-library leaf)
// serves api/webhooks, which runs a webhook's CRC check synchronously as the
// platform does; the workers reach URLs through the same client, so neither
// tier builds its own (docs/webhooks.md, "The guard").
var featureKit = anyOf(pkgs("api/httpx", "api/objects", "render", "api/apierr", "api/auth", "api/ads/adsx",
	"storage", "storage/ids", "storage/blob", "tasks", "validation", "events", "events/bus", "internal/outbound"), tree("domain", "ops"))

// featureTestKit are the module packages a feature's tests may import on
// top of featureKit (storage/faultsredis: the faults on demand's Redis
// store, which tests give the features as cmd does; docs/faults.md).
var featureTestKit = anyOf(apiKit, tree("storage/storagetest"),
	pkgs("storage/postgres", "storage/blob/local", "internal/outbound/outboundtest", "storage/faultsredis"))

// driverModules are the third-party drivers behind storage/postgres and
// storage/blob.
var driverModules = ext("github.com/jackc/pgx", "github.com/aws", "github.com/minio/minio-go")

// Set reports whether a full import path belongs to a group of packages.
type Set func(path string) bool

// rel returns path relative to Module ("." for the module root) and whether
// path is a package of the module at all.
func rel(path string) (string, bool) {
	if path == Module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, Module+"/")
	return r, ok
}

// inModule is every package of the module.
func inModule(path string) bool {
	_, ok := rel(path)
	return ok
}

// outside is every package not in the module: standard library and
// third-party.
func outside(path string) bool { return !inModule(path) }

// std is the standard library: a first path element without a dot.
func std(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !inModule(path) && !strings.Contains(first, ".")
}

// pkgs is exactly the named module packages (paths relative to Module).
func pkgs(rels ...string) Set {
	return func(path string) bool {
		r, ok := rel(path)
		return ok && slices.Contains(rels, r)
	}
}

// tree is the named module packages and every package below them.
func tree(rels ...string) Set {
	return func(path string) bool {
		r, ok := rel(path)
		return ok && underAny(r, rels, true)
	}
}

// below is every module package strictly below dir.
func below(dir string) Set {
	return func(path string) bool {
		r, ok := rel(path)
		return ok && underAny(r, []string{dir}, false)
	}
}

// ext is the named third-party import paths and every package below them.
func ext(prefixes ...string) Set {
	return func(path string) bool {
		return !inModule(path) && underAny(path, prefixes, true)
	}
}

// anyOf is the union of sets.
func anyOf(sets ...Set) Set {
	return func(path string) bool {
		for _, s := range sets {
			if s(path) {
				return true
			}
		}
		return false
	}
}

// except is s without the packages of not.
func except(s, not Set) Set {
	return func(path string) bool { return s(path) && !not(path) }
}

// feature is a feature package: api/X or api/X/Y that is not in apiKit.
func feature(path string) bool {
	r, ok := rel(path)
	if !ok || apiKit(path) || !strings.HasPrefix(r, "api/") {
		return false
	}
	return strings.Count(r, "/") <= 2
}

// workerDomain is a package under workers/ other than the workers root and
// workers/sweep (which the domains share).
func workerDomain(path string) bool {
	return below("workers")(path) && !tree("workers/sweep")(path)
}

// underAny reports whether p is one of dirs (if self) or below one of them.
func underAny(p string, dirs []string, self bool) bool {
	for _, d := range dirs {
		if (self && p == d) || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
