package archtest

import (
	"slices"
	"strings"
	"testing"
)

// m returns the full import path of a module package.
func m(rel string) string { return Module + "/" + rel }

// ms returns the full import paths of module packages.
func ms(rels ...string) []string {
	out := make([]string, len(rels))
	for i, r := range rels {
		out[i] = m(r)
	}
	return out
}

// code returns a package with non-test imports; module packages are given
// relative, others start with "std:" or "ext:".
func code(pkg string, imports ...string) Package {
	return Package{ImportPath: m(pkg), Imports: paths(imports)}
}

// tests is like code for imports in _test.go files (half in the package's
// own tests, half in its external tests).
func tests(pkg string, imports ...string) Package {
	p := paths(imports)
	half := len(p) / 2
	return Package{ImportPath: m(pkg), TestImports: p[:half], XTestImports: p[half:]}
}

// paths turns "std:x", "ext:x" and module-relative paths into import paths.
func paths(specs []string) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		if p, ok := strings.CutPrefix(s, "std:"); ok {
			out[i] = p
		} else if p, ok := strings.CutPrefix(s, "ext:"); ok {
			out[i] = p
		} else {
			out[i] = m(s)
		}
	}
	return out
}

// badCase is one package with a wrong import, the rule it breaks and the
// line Check prints.
type badCase struct {
	name string
	pkg  Package
	rule string
	want string
}

// badCases each hold one package with exactly one import that breaks the
// layout (next to allowed ones), the rule it breaks and the line printed.
var badCases = []badCase{
	{"api imports cmd", code("api", "std:net/http", "api/httpx", "cmd/aviary"), "nothing-imports-cmd",
		"api imports cmd/aviary: nothing imports cmd: it only wires the binary (layout.md)"},
	{"e2e tests import cmd", tests("internal/e2e", "std:testing", "cmd/aviary"), "nothing-imports-cmd",
		"internal/e2e (tests) imports cmd/aviary: nothing imports cmd: it only wires the binary (layout.md)"},
	{"feature imports a worker domain", code("api/posts", "api/httpx", "workers/compliance"), "api-not-workers",
		"api/posts imports workers/compliance: api never imports workers: the tiers meet only in tasks and storage (layout.md)"},
	{"api root imports workers", code("api", "api/posts", "workers"), "api-not-workers",
		"api imports workers: api never imports workers: the tiers meet only in tasks and storage (layout.md)"},
	{"worker domain imports httpx", code("workers/compliance", "tasks", "storage", "api/httpx"), "workers-not-api",
		"workers/compliance imports api/httpx: workers never import api: the tiers meet only in tasks and storage (layout.md)"},
	{"tasks imports storage", code("tasks", "std:encoding/json", "ext:github.com/hibiken/asynq", "storage"), "tasks-leaf",
		"tasks imports storage: tasks is a leaf: standard library and asynq only (layout.md)"},
	{"tasks tests import redis", tests("tasks", "std:testing", "ext:github.com/redis/go-redis/v9"), "tasks-leaf",
		"tasks (tests) imports github.com/redis/go-redis/v9: tasks is a leaf: standard library and asynq only (layout.md)"},
	{"validation imports pgx", code("validation", "std:regexp", "ext:github.com/go-playground/validator/v10", "ext:github.com/jackc/pgx/v5"), "validation-leaf",
		"validation imports github.com/jackc/pgx/v5: validation is a leaf: standard library and validator/v10 only (layout.md)"},
	{"search query imports pgx", code("domain/searchquery", "std:strings", "domain/posttext", "ext:github.com/jackc/pgx/v5"), "domain-rules",
		"domain/searchquery imports github.com/jackc/pgx/v5: domain holds rules both tiers share: standard library, the storage records, storage/ids, validation (validator/v10), events (a leaf: stream rules match its payloads) and other domain packages only (docs/architecture.md)"},
	{"post text imports postgres", code("domain/posttext", "std:unicode", "storage", "storage/postgres"), "domain-rules",
		"domain/posttext imports storage/postgres: domain holds rules both tiers share: standard library, the storage records, storage/ids, validation (validator/v10), events (a leaf: stream rules match its payloads) and other domain packages only (docs/architecture.md)"},
	{"products imports an api feature", code("domain/products", "validation", "api/ads/catalogs"), "domain-rules",
		"domain/products imports api/ads/catalogs: domain holds rules both tiers share: standard library, the storage records, storage/ids, validation (validator/v10), events (a leaf: stream rules match its payloads) and other domain packages only (docs/architecture.md)"},
	{"search query tests import storagetest", tests("domain/searchquery", "std:testing", "domain/posttext", "storage/storagetest"), "domain-rules",
		"domain/searchquery (tests) imports storage/storagetest: domain holds rules both tiers share: standard library, the storage records, storage/ids, validation (validator/v10), events (a leaf: stream rules match its payloads) and other domain packages only (docs/architecture.md)"},
	{"validation imports ids", code("validation", "storage/ids"), "validation-leaf",
		"validation imports storage/ids: validation is a leaf: standard library and validator/v10 only (layout.md)"},
	{"ops imports an api feature", code("ops/posts", "storage", "domain/posttext", "api/posts"), "ops-not-tiers",
		"ops/posts imports api/posts: ops never imports api or workers: both tiers call the operations, not the other way round (docs/events.md)"},
	{"ops tests import a worker domain", tests("ops/posts", "std:testing", "storage/storagetest", "workers/dispatch"), "ops-not-tiers",
		"ops/posts (tests) imports workers/dispatch: ops never imports api or workers: both tiers call the operations, not the other way round (docs/events.md)"},
	{"ops imports postgres", code("ops/posts", "storage", "events", "storage/postgres"), "ops-home",
		"ops/posts imports storage/postgres: ops holds the operations both tiers share: standard library, the storage records, storage/ids, events, domain/..., validation and other ops packages only (docs/events.md)"},
	{"ops imports redis", code("ops/posts", "std:context", "validation", "ext:github.com/redis/go-redis/v9"), "ops-home",
		"ops/posts imports github.com/redis/go-redis/v9: ops holds the operations both tiers share: standard library, the storage records, storage/ids, events, domain/..., validation and other ops packages only (docs/events.md)"},
	{"render imports objects", code("render", "storage", "events", "api/objects"), "render-not-tiers",
		"render imports api/objects: render never imports api or workers: both tiers render through it, not the other way round (docs/architecture.md)"},
	{"render tests import a worker domain", tests("render", "std:testing", "storage/storagetest", "workers/webhooks"), "render-not-tiers",
		"render (tests) imports workers/webhooks: render never imports api or workers: both tiers render through it, not the other way round (docs/architecture.md)"},
	{"render imports redis", code("render", "std:encoding/json", "domain/posttext", "ext:github.com/redis/go-redis/v9"), "render-home",
		"render imports github.com/redis/go-redis/v9: render holds the object renderer both tiers share: standard library, the storage records, storage/ids, events and domain/... only (docs/architecture.md)"},
	{"render imports asynq tasks", code("render", "storage/ids", "tasks"), "render-home",
		"render imports tasks: render holds the object renderer both tiers share: standard library, the storage records, storage/ids, events and domain/... only (docs/architecture.md)"},
	{"web imports an api feature", code("web/oauth", "web", "storage", "api/posts"), "web-not-tiers",
		"web/oauth imports api/posts: web never imports api or workers: it is a tier of its own beside api (docs/architecture.md)"},
	{"web imports api/auth", code("web", "std:net/http", "api/auth"), "web-not-tiers",
		"web imports api/auth: web never imports api or workers: it is a tier of its own beside api (docs/architecture.md)"},
	{"web tests import a worker domain", tests("web/oauth", "std:testing", "storage/storagetest", "workers/media"), "web-not-tiers",
		"web/oauth (tests) imports workers/media: web never imports api or workers: it is a tier of its own beside api (docs/architecture.md)"},
	{"web imports postgres", code("web/oauth", "web", "storage/postgres"), "web-home",
		"web/oauth imports storage/postgres: web imports the standard library, the storage records, storage/ids, events, domain/..., ops/..., render, internal/..., go-redis (sessions, throttles) and x/crypto (passwords) only (docs/architecture.md)"},
	{"web imports asynq tasks", code("web", "tasks"), "web-home",
		"web imports tasks: web imports the standard library, the storage records, storage/ids, events, domain/..., ops/..., render, internal/..., go-redis (sessions, throttles) and x/crypto (passwords) only (docs/architecture.md)"},
	{"api imports web", code("api/users", "api/httpx", "web"), "web-cmd-only",
		"api/users imports web: only cmd wires the web tier; no other package imports it (docs/architecture.md)"},
	{"worker imports web", code("workers/media", "web/oauth"), "web-cmd-only",
		"workers/media imports web/oauth: only cmd wires the web tier; no other package imports it (docs/architecture.md)"},
	{"storage imports postgres", code("storage", "std:errors", "storage/postgres"), "storage-no-drivers",
		"storage imports storage/postgres: the storage root knows no drivers: no postgres, blob, pgx, AWS SDK or minio-go (layout.md)"},
	{"storage imports aws", code("storage", "std:time", "ext:github.com/aws/aws-sdk-go-v2/service/s3"), "storage-no-drivers",
		"storage imports github.com/aws/aws-sdk-go-v2/service/s3: the storage root knows no drivers: no postgres, blob, pgx, AWS SDK or minio-go (layout.md)"},
	{"storage tests import blob/local", tests("storage", "std:testing", "storage/blob/local"), "storage-no-drivers",
		"storage (tests) imports storage/blob/local: the storage root knows no drivers: no postgres, blob, pgx, AWS SDK or minio-go (layout.md)"},
	{"postgres imports a worker domain", code("storage/postgres", "storage", "ext:github.com/jackc/pgx/v5", "workers/compliance"), "drivers-no-handlers",
		"storage/postgres imports workers/compliance: storage drivers know no API handlers and no queue handlers (layout.md)"},
	{"s3 imports httpx", code("storage/blob/s3", "storage/blob", "api/httpx"), "drivers-no-handlers",
		"storage/blob/s3 imports api/httpx: storage drivers know no API handlers and no queue handlers (layout.md)"},
	{"feature imports the api test kit", code("api/posts", "api/httpx", "api/apitest"), "test-kits-tests-only",
		"api/posts imports api/apitest: api/apitest, api/ads/adstest and internal/outbound/outboundtest are test kits: only _test.go files import them (docs/architecture.md)"},
	{"api root imports the ads test kit", code("api", "api/httpx", "api/ads/adstest"), "test-kits-tests-only",
		"api imports api/ads/adstest: api/apitest, api/ads/adstest and internal/outbound/outboundtest are test kits: only _test.go files import them (docs/architecture.md)"},
	{"feature imports feature", code("api/compliance", "api/httpx", "storage", "api/posts"), "features-not-features",
		"api/compliance imports api/posts: feature packages never import each other (layout.md)"},
	{"ads feature imports ads feature", code("api/ads/campaigns", "api/ads/adsx", "api/ads/accounts"), "features-not-features",
		"api/ads/campaigns imports api/ads/accounts: feature packages never import each other (layout.md)"},
	{"feature tests import feature", tests("api/posts", "api", "storage/storagetest", "api/media"), "features-not-features",
		"api/posts (tests) imports api/media: feature packages never import each other (layout.md)"},
	{"feature imports api root", code("api/posts", "api/httpx", "api"), "features-not-api-root",
		"api/posts imports api: the api root assembles the features; a feature never imports it (layout.md)"},
	{"feature imports postgres", code("api/posts", "storage", "storage/postgres"), "features-no-drivers",
		"api/posts imports storage/postgres: a feature talks to its own narrow store interface, never a storage driver (layout.md)"},
	{"feature imports s3", code("api/media", "storage/blob", "storage/blob/s3"), "features-no-drivers",
		"api/media imports storage/blob/s3: a feature talks to its own narrow store interface, never a storage driver (layout.md)"},
	{"feature imports ratelimit", code("api/search", "api/httpx", "api/ratelimit"), "features-no-ratelimit",
		"api/search imports api/ratelimit: a feature sets Endpoint.Limit; only api/httpx uses api/ratelimit (layout.md)"},
	{"non-ads feature imports adsx", code("api/posts", "api/httpx", "api/ads/adsx"), "adsx-ads-only",
		"api/posts imports api/ads/adsx: api/ads/adsx is the ads kit: only features under api/ads import it (layout.md)"},
	{"feature imports logctx", code("api/posts", "api/httpx", "internal/logctx"), "feature-imports",
		"api/posts imports internal/logctx: a feature imports only api/httpx, api/objects, render, api/apierr, api/auth, storage, storage/ids, storage/blob, domain/..., ops/..., tasks, validation, events, events/bus, internal/outbound (ads: api/ads/adsx) (layout.md)"},
	{"feature code imports storagetest", code("api/posts", "storage/storagetest"), "feature-imports",
		"api/posts imports storage/storagetest: a feature imports only api/httpx, api/objects, render, api/apierr, api/auth, storage, storage/ids, storage/blob, domain/..., ops/..., tasks, validation, events, events/bus, internal/outbound (ads: api/ads/adsx) (layout.md)"},
	{"feature tests import s3", tests("api/media", "storage/blob/local", "storage/blob/s3"), "feature-test-imports",
		"api/media (tests) imports storage/blob/s3: feature tests add only storage/storagetest, storage/postgres, storage/blob/local, storage/faultsredis, internal/outbound/outboundtest, the api root and kit (layout.md)"},
	{"domain imports workers root", code("workers/compliance", "workers/sweep", "workers"), "domains-not-workers-root",
		"workers/compliance imports workers: the workers root registers the domains; a domain never imports it (layout.md)"},
	{"domain imports domain", code("workers/compliance", "tasks", "workers/media"), "domains-not-domains",
		"workers/compliance imports workers/media: worker domains never import each other; share through workers/sweep, tasks or storage (layout.md)"},
	{"outbound imports storage", code("internal/outbound", "std:net/http", "storage"), "internal-leaves",
		"internal/outbound imports storage: internal packages other than e2e and archtest are leaves: standard library only (and the guarded client's test targets, internal/outbound/outboundtest) (layout.md)"},
	{"domain imports outbound", code("domain/webhooks", "std:net/http", "internal/outbound"), "domain-rules",
		"domain/webhooks imports internal/outbound: domain holds rules both tiers share: standard library, the storage records, storage/ids, validation (validator/v10), events (a leaf: stream rules match its payloads) and other domain packages only (docs/architecture.md)"},
	{"logctx imports storage", code("internal/logctx", "std:log/slog", "storage"), "internal-leaves",
		"internal/logctx imports storage: internal packages other than e2e and archtest are leaves: standard library only (and the guarded client's test targets, internal/outbound/outboundtest) (layout.md)"},
	{"logctx tests import a module", tests("internal/logctx", "std:testing", "ext:github.com/google/uuid"), "internal-leaves",
		"internal/logctx (tests) imports github.com/google/uuid: internal packages other than e2e and archtest are leaves: standard library only (and the guarded client's test targets, internal/outbound/outboundtest) (layout.md)"},
}

// TestCheckReportsEachBreak checks that every deliberately wrong import is
// reported exactly once, by the right rule, with its reason.
func TestCheckReportsEachBreak(t *testing.T) {
	for _, tc := range badCases {
		t.Run(tc.name, func(t *testing.T) {
			got := Check([]Package{tc.pkg})
			if len(got) != 1 {
				t.Fatalf("got %d violations, want 1:\n%s", len(got), Format(got))
			}
			if got[0].Rule != tc.rule || got[0].String() != tc.want {
				t.Errorf("got  [%s] %s\nwant [%s] %s", got[0].Rule, got[0], tc.rule, tc.want)
			}
		})
	}
}

// TestEveryRuleIsTested makes sure a new rule comes with a bad case.
func TestEveryRuleIsTested(t *testing.T) {
	for _, r := range Rules {
		if !slices.ContainsFunc(badCases, func(c badCase) bool { return c.rule == r.Name }) {
			t.Errorf("rule %s has no case in badCases", r.Name)
		}
	}
}

// TestRulesAreWellFormed checks each rule has a unique name, a reason,
// packages, files and exactly one of Deny and Allow.
func TestRulesAreWellFormed(t *testing.T) {
	names := map[string]bool{}
	for i, r := range Rules {
		switch {
		case r.Name == "" || names[r.Name]:
			t.Errorf("rule %d: empty or duplicate name %q", i, r.Name)
		case r.Reason == "" || r.Pkgs == nil || r.Files == 0:
			t.Errorf("rule %s: needs Reason, Pkgs and Files", r.Name)
		case (r.Deny == nil) == (r.Allow == nil):
			t.Errorf("rule %s: needs exactly one of Deny and Allow", r.Name)
		}
		names[r.Name] = true
	}
}

// cleanTree is the target layout with the imports it allows, including
// the edge cases the rules must not flag.
var cleanTree = []Package{
	code("cmd/aviary", "api", "api/httpx", "api/ratelimit", "api/posts", "workers", "workers/compliance",
		"storage", "storage/postgres", "storage/blob/s3", "storage/blob/miniowatch", "tasks", "internal/logctx",
		"ext:github.com/hibiken/asynq", "std:os"),
	tests("cmd/aviary", "storage/storagetest", "storage/postgres", "ext:github.com/jackc/pgx/v5", "std:testing"),
	code("internal/logctx", "std:context", "std:log/slog"),
	tests("internal/logctx", "std:testing", "internal/logctx"),
	tests("internal/e2e", "std:os/exec", "storage/storagetest", "api/httpx", "workers", "tasks"),
	code("api", "api/httpx", "api/apierr", "api/auth", "api/ratelimit", "api/compliance", "api/posts",
		"api/ads/adsx", "api/ads/campaigns", "storage", "storage/blob", "internal/logctx"),
	tests("api", "api/posts", "api/apitest", "storage/postgres", "storage/storagetest", "storage/blob/local"),
	code("api/apitest", "api", "api/posts", "api/compliance", "api/search", "storage/postgres", "storage/storagetest",
		"storage/blob/local", "internal/logctx", "ext:github.com/getkin/kin-openapi/openapi3", "std:testing"),
	tests("api/posts", "api/apitest", "api/posts", "storage", "storage/postgres", "storage/storagetest/factory"),
	code("api/httpx", "api/apierr", "api/auth", "api/ratelimit", "internal/logctx", "storage/ids"),
	code("api/ratelimit", "api/apierr", "api/auth", "ext:github.com/redis/go-redis/v9"),
	code("api/compliance", "api/httpx", "api/apierr", "api/auth", "storage", "storage/ids", "storage/blob",
		"tasks", "validation", "ext:github.com/hibiken/asynq", "std:net/http"),
	tests("api/compliance", "api", "api/httpx", "api/ratelimit", "api/compliance", "storage/storagetest",
		"storage/storagetest/factory", "storage/postgres", "storage/blob/local", "std:testing"),
	code("api/media", "api/httpx", "storage/blob", "tasks"),
	code("api/ads/adsx", "api/httpx", "api/apierr", "storage"),
	code("api/ads/campaigns", "api/ads/adsx", "api/httpx", "storage", "validation"),
	tests("api/ads/campaigns", "api", "api/ads/adsx", "storage/storagetest/factory"),
	code("workers", "workers/sweep", "workers/compliance", "workers/media", "tasks", "storage", "internal/logctx"),
	tests("workers", "storage/postgres", "storage/storagetest", "storage/blob/local"),
	code("workers/sweep", "tasks", "storage", "ext:github.com/hibiken/asynq"),
	code("workers/compliance", "workers/sweep", "tasks", "storage", "storage/blob", "storage/ids"),
	tests("workers/compliance", "workers/compliance", "storage/storagetest", "storage/postgres"),
	code("tasks", "std:encoding/json", "ext:github.com/hibiken/asynq"),
	tests("tasks", "std:testing", "ext:github.com/hibiken/asynq", "tasks"),
	code("validation", "std:regexp", "ext:github.com/go-playground/validator/v10"),
	code("storage", "std:errors", "std:time"),
	code("storage/ids", "std:crypto/rand"),
	code("domain/searchquery", "std:strings", "std:unicode"),
	tests("domain/searchquery", "std:testing", "domain/searchquery", "domain/posttext", "storage"),
	code("domain/posttext", "std:unicode", "storage"),
	code("ops/posts", "std:context", "storage", "storage/ids", "events", "domain/posttext", "validation"),
	tests("ops/posts", "std:testing", "ops/posts", "storage/postgres", "storage/storagetest/factory"),
	code("api/posts", "api/httpx", "ops/posts", "storage"),
	code("render", "std:encoding/json", "storage", "storage/ids", "events", "domain/posttext"),
	tests("render", "std:testing", "render", "storage/postgres", "storage/storagetest", "storage/storagetest/factory"),
	code("api/objects", "api/httpx", "api/apierr", "render", "storage/ids"),
	code("api/streams", "api/objects", "render", "events", "events/bus"),
	code("workers/webhooks", "render", "events", "storage"),
	code("internal/outbound", "std:net/http", "std:net/netip", "std:syscall"),
	code("domain/webhooks", "std:crypto/hmac", "std:net/http", "storage"),
	code("api/webhooks", "api/httpx", "api/apierr", "domain/webhooks", "internal/outbound", "storage"),
	code("workers/webhooks", "domain/webhooks", "internal/outbound", "storage"),
	code("workers/catalogs", "internal/outbound", "storage", "tasks", "workers/sweep"),
	code("workers/dispatch", "events", "ops/posts", "storage"),
	code("domain/products", "validation", "ext:github.com/go-playground/validator/v10"),
	code("storage/postgres", "storage", "storage/ids", "ext:github.com/jackc/pgx/v5/pgxpool"),
	tests("storage/postgres", "storage/postgres", "storage/storagetest", "storage/storagetest/factory"),
	code("storage/blob", "std:io"),
	code("web", "std:html/template", "storage", "storage/ids", "internal/logctx", "ext:github.com/redis/go-redis/v9", "ext:golang.org/x/crypto/argon2"),
	code("web/oauth", "web", "storage", "storage/ids", "domain/oauth2", "render", "ops/posts", "events"),
	tests("web/oauth", "std:testing", "web", "storage/postgres", "storage/storagetest"),
	code("cmd/aviary", "web", "web/oauth", "api"),
	tests("internal/e2e", "web", "storage/postgres"),
	code("storage/blob/s3", "storage/blob", "ext:github.com/aws/aws-sdk-go-v2/service/s3"),
	code("storage/blob/miniowatch", "storage/blob", "ext:github.com/minio/minio-go/v7"),
	tests("storage/blob/local", "storage/blob/blobtest", "storage/blob/local"),
	code("storage/storagetest", "storage/postgres", "ext:github.com/minio/minio-go/v7"),
	code("storage/storagetest/factory", "storage", "storage/postgres", "storage/ids"),
}

// TestCheckAcceptsTheLayout checks that the target tree, with every
// allowed import, has no violation.
func TestCheckAcceptsTheLayout(t *testing.T) {
	if got := Check(cleanTree); len(got) != 0 {
		t.Errorf("clean tree has violations:\n%s", Format(got))
	}
}

// TestCheckSkipsOtherModules checks that packages outside the module are
// never judged.
func TestCheckSkipsOtherModules(t *testing.T) {
	other := Package{ImportPath: "example.com/x", Imports: ms("cmd/aviary")}
	if got := Check([]Package{other}); len(got) != 0 {
		t.Errorf("got %s", Format(got))
	}
}

// TestCheckOrder checks violations come sorted, code before tests.
func TestCheckOrder(t *testing.T) {
	pkgs := []Package{
		tests("workers/media", "std:testing", "api/posts"),
		code("workers/media", "api/httpx"),
		code("api/posts", "workers/media", "cmd/aviary"),
	}
	var got []string
	for _, v := range Check(pkgs) {
		got = append(got, short(v.Pkg)+" "+short(v.Import)+" "+v.Rule)
	}
	want := []string{
		"api/posts cmd/aviary nothing-imports-cmd",
		"api/posts workers/media api-not-workers",
		"workers/media api/httpx workers-not-api",
		"workers/media api/posts workers-not-api",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestClassification pins which packages are features and worker domains.
func TestClassification(t *testing.T) {
	cases := []struct {
		rel             string
		feature, domain bool
	}{
		{"api", false, false},
		{"api/httpx", false, false},
		{"api/apierr", false, false},
		{"api/auth", false, false},
		{"api/ratelimit", false, false},
		{"api/ads", false, false},
		{"api/ads/adsx", false, false},
		{"api/apitest", false, false},
		{"api/ads/adstest", false, false},
		{"api/compliance", true, false},
		{"api/oauth", true, false},
		{"api/ads/lineitems", true, false},
		{"api/ads/lineitems/deep", false, false},
		{"workers", false, false},
		{"workers/sweep", false, false},
		{"workers/compliance", false, true},
		{"workers/media", false, true},
		{"apix", false, false},
	}
	for _, c := range cases {
		if got := feature(m(c.rel)); got != c.feature {
			t.Errorf("feature(%s) = %v, want %v", c.rel, got, c.feature)
		}
		if got := workerDomain(m(c.rel)); got != c.domain {
			t.Errorf("workerDomain(%s) = %v, want %v", c.rel, got, c.domain)
		}
	}
}
