package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// openapiFile is the platform's OpenAPI description (version 2.167). It is
// third-party material the project may read but not redistribute, so it
// is not in the repository: the tests read it from AVIARY_OPENAPI_FILE, or
// from the shared reference tree beside the checkout
// (docs/openapi-conformance.md).
const openapiFile = "x-api-v2-openapi-2.167.json"

// genericProblems are the Problem types the description's Problem schema
// cannot describe, each with the reason. That schema is a closed oneOf over
// nine typed problems chosen by a discriminator on `type`, so any other type
// matches none of them. The spec ("Errors") makes about:blank the generic
// type and lists the conflict and unsupported-authentication slugs, which
// the description has no schema for. Such a problem is checked against the
// spec's Problem instead (type and title required, detail a string, status
// an integer), and, inside a 200 response's errors array, removed before
// the rest of the body is checked against the description.
var genericProblems = map[string]string{
	"about:blank":                           "the spec's generic problem type (401, 403 Forbidden, 405, 413, 415, 429); not in the description's discriminator",
	"https://api.x.com/2/problems/conflict": "spec slug (409 job in progress) without a schema in the description",
	"https://api.x.com/2/problems/unsupported-authentication": "spec slug (403 wrong credential kind) without a schema in the description",
	"https://api.x.com/2/problems/duplicate-rules":            "spec slug (a stream rule the app already has, in a 200's errors) without a schema in the description",
	"https://api.x.com/2/problems/invalid-rules":              "spec slug (a stream rule that does not parse, in a 200's errors) without a schema in the description",
	"https://api.x.com/2/problems/noncompliant-rules":         "spec slug (a stream rule the stream does not take, in a 200's errors) without a schema in the description",
	"https://api.x.com/2/problems/rule-cap":                   "spec slug (403: an app's stream rule cap) without a schema in the description",
	"https://api.x.com/2/problems/streaming-connection":       "spec slug (429 TooManyConnections on a stream, docs/streams.md) without a schema in the description",
	"https://api.x.com/2/problems/usage-capped":               "spec slug (429 past an app's usage cap, docs/usage-and-credits.md) without a schema in the description",
	"https://api.x.com/2/problems/credits":                    "the platform's 402 CreditsDepleted (docs/usage-and-credits.md), in neither the spec nor the description",
}

// documentedStatus maps a status the platform answers but the description
// does not list to the one whose response it is checked as, per operation
// ("METHOD path template"), with the reason.
var documentedStatus = map[string]map[int]int{
	// An add that creates rules is 201 on the platform (its clients and
	// sample code check for it); the description lists only 200
	// (docs/streams-rules.md).
	"POST /2/tweets/search/stream/rules": {http.StatusCreated: http.StatusOK},
}

// specProblem is the spec's Problem (RFC 7807): type and title required.
var specProblem = &openapi3.Schema{
	Type:     &openapi3.Types{openapi3.TypeObject},
	Required: []string{"type", "title"},
	Properties: openapi3.Schemas{
		"type":   openapi3.NewStringSchema().NewRef(),
		"title":  openapi3.NewStringSchema().NewRef(),
		"detail": openapi3.NewStringSchema().NewRef(),
		"status": openapi3.NewIntegerSchema().NewRef(),
	},
}

// openAPI is the description, loaded once per test binary.
var openAPI struct {
	once   sync.Once
	router routers.Router
	err    error
}

// OpenAPIRouter routes requests to the operations of the platform's
// OpenAPI description, loaded once per test binary.
// Without the description the test is skipped with a message saying how
// to get one, or, under CI (where the shared tree is always beside the
// checkout), fails, so CI never passes without the conformance check.
func OpenAPIRouter(t *testing.T) routers.Router {
	t.Helper()
	file, found := openapiPath()
	if !found {
		msg := missingOpenAPI(file)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	openAPI.once.Do(func() { openAPI.router, openAPI.err = loadOpenAPI(t.Context(), file) })
	if openAPI.err != nil {
		t.Fatal(openAPI.err)
	}
	return openAPI.router
}

// OptionalOpenAPI is OpenAPIRouter for a test whose OpenAPI check is one
// of several: nil (logged) on a developer's clone without the
// description, so the test's other checks still run; ValidateResponse
// with a nil router checks nothing. Under CI it is OpenAPIRouter.
func OptionalOpenAPI(t *testing.T) routers.Router {
	t.Helper()
	if file, found := openapiPath(); !found && os.Getenv("CI") == "" {
		t.Log(missingOpenAPI(file) + "; responses are not checked against it")
		return nil
	}
	return OpenAPIRouter(t)
}

// openapiPath is where the description is read from, and whether a file
// is there: AVIARY_OPENAPI_FILE, else ../shared/reference/openapi beside
// the module.
func openapiPath() (string, bool) {
	file := os.Getenv("AVIARY_OPENAPI_FILE")
	if file == "" {
		root, err := moduleRoot()
		if err != nil {
			return err.Error(), false
		}
		file = filepath.Join(root, "..", "shared", "reference", "openapi", openapiFile)
	}
	_, err := os.Stat(file)
	return file, err == nil
}

// missingOpenAPI says where the description was looked for and how to
// point the tests at a copy.
func missingOpenAPI(file string) string {
	return fmt.Sprintf("the platform's OpenAPI description %s is not at %s: set AVIARY_OPENAPI_FILE to a copy "+
		"(docs/openapi-conformance.md)", openapiFile, file)
}

func loadOpenAPI(ctx context.Context, file string) (routers.Router, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	doc, err := loader.LoadFromFile(file)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", file, err)
	}
	// A few patterns of schemas Aviary does not serve yet use look-ahead,
	// which Go's regexp (RE2) cannot compile; the document is checked
	// without compiling patterns. Response bodies are still checked against
	// the patterns of the schemas they meet.
	if err := doc.Validate(ctx, openapi3.DisableSchemaPatternValidation()); err != nil {
		return nil, fmt.Errorf("validate %s: %w", file, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", file, err)
	}
	return router, nil
}

// moduleRoot is the nearest directory above the working directory holding
// go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// ValidateResponse checks r against the operation method and path route to
// in the description (its server is https://api.x.com), handling the
// genericProblems exceptions.
func ValidateResponse(ctx context.Context, router routers.Router, method, path string, r Reply) error {
	if router == nil {
		return nil // OptionalOpenAPI found no description (logged)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://api.x.com"+path, nil)
	if err != nil {
		return fmt.Errorf("build request: %w", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("find the operation: %w", err)
	}
	body := []byte(r.Raw)
	excludeBody := false
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/problem+json") {
		if typ, _ := r.Body["type"].(string); genericProblems[typ] != "" {
			if err := specProblem.VisitJSON(asJSON(r.Body)); err != nil {
				return fmt.Errorf("problem of type %s (checked as the spec's Problem: %s): %w", typ, genericProblems[typ], err)
			}
			excludeBody = true
		}
	} else if body, err = dropGenericProblems(r.Body); err != nil {
		return err
	}
	status := r.Status
	if as, ok := documentedStatus[method+" "+route.Path][status]; ok {
		status = as
	}
	input := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 r.Header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if excludeBody {
		// The status and content type are still checked against the operation.
		if err := openapi3filter.ValidateResponse(ctx, withoutBody(input)); err != nil {
			return err
		}
		responseRef := route.Operation.Responses.Status(status)
		if responseRef == nil {
			responseRef = route.Operation.Responses.Default()
		}
		if responseRef.Value.Content.Get(r.Header.Get("Content-Type")) == nil {
			return fmt.Errorf("content type %q is not declared for %d", r.Header.Get("Content-Type"), status)
		}
		return nil
	}
	return openapi3filter.ValidateResponse(ctx, input)
}

func withoutBody(in *openapi3filter.ResponseValidationInput) *openapi3filter.ResponseValidationInput {
	out := *in
	opts := *in.Options
	opts.ExcludeResponseBody = true
	out.Options = &opts
	return &out
}

// dropGenericProblems checks every genericProblems entry of a success
// body's errors array against the spec's Problem and returns the body
// without them.
func dropGenericProblems(body map[string]any) ([]byte, error) {
	errs, _ := body["errors"].([]any)
	var kept []any
	for _, e := range errs {
		p, _ := e.(map[string]any)
		typ, _ := p["type"].(string)
		if genericProblems[typ] == "" {
			kept = append(kept, e)
			continue
		}
		if err := specProblem.VisitJSON(asJSON(p)); err != nil {
			return nil, fmt.Errorf("errors[] problem of type %s: %w", typ, err)
		}
	}
	out := make(map[string]any, len(body))
	for k, v := range body {
		out[k] = v
	}
	if errs != nil {
		if kept == nil {
			delete(out, "errors")
		} else {
			out["errors"] = kept
		}
	}
	return json.Marshal(out)
}

// asJSON round-trips v so numbers are float64, as the validator expects.
func asJSON(v any) any {
	raw, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(raw, &out)
	return out
}
