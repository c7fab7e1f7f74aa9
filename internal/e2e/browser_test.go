package e2e

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The browser harness: scenarios (a name, a start URL, steps) run by
// testdata/browser_scenarios.js in headless Chromium with playwright-core,
// each in a fresh browser context. A "shot" step keeps a screenshot (a test
// artefact, see artifactsDir) and records the page: its URL, the status and
// headers of its document, its text and a basic accessibility audit, which
// checkShots asserts for every page of every scenario; it also records the
// page's elements with an id, for the checks (a pre-filled field, a PIN).
//
// To cover another page, add a browserScenario to a table like
// oauth2BrowserScenarios or oauth1BrowserScenarios with the steps below and
// a check for what the scenario must end with, e.g.
//
//	{Name: "oauth1-authorize", Start: authorizeURL, Steps: []browserStep{
//		shot("login"), fill("Username", user), fill("Password", password), click("Log in"),
//		expectText("Authorize app"), shot("consent"), click("Authorize app"), waitURL(callback)},
//		check: func(t *testing.T, r browserResult) { /* the callback got oauth_verifier */ }},
//
// and pass the table to runBrowserScenarios (docs/oauth.md, "Browser tests").

//go:embed testdata/browser_scenarios.js
var browserScenariosJS string

// playwright-core, driving the system's Chromium (Debian package chromium,
// installed by `make test`'s deps step: scripts/ensure-deps --for-tests).
const (
	playwrightPackage = "playwright-core"
	playwrightVersion = "1.64.1"
)

// browserStep is one action of a scenario, done by the script's steps
// table: goto URL, fill the field labelled Label with Value, click the
// button whose text is Label (and wait for the page it leads to),
// expectText Text, expectURL (the page's URL starts with URL now), waitURL
// (until the page's URL starts with URL), shot Name (screenshot and record
// the page), frames (record what each iframe shows), waitText (until the
// element with id Label shows Text, without a reload), put (PUT Value to
// URL from the browser's context), viewport (resize to Value, "WxH"),
// fitsWidth (the page does not scroll sideways).
type browserStep struct {
	Do    string `json:"do"`
	URL   string `json:"url,omitempty"`
	Label string `json:"label,omitempty"`
	Value string `json:"value,omitempty"`
	Text  string `json:"text,omitempty"`
	Name  string `json:"name,omitempty"`
}

func goTo(u string) browserStep { return browserStep{Do: "goto", URL: u} }
func fill(label, value string) browserStep {
	return browserStep{Do: "fill", Label: label, Value: value}
}
func click(button string) browserStep    { return browserStep{Do: "click", Label: button} }
func expectText(text string) browserStep { return browserStep{Do: "expectText", Text: text} }
func waitURL(prefix string) browserStep  { return browserStep{Do: "waitURL", URL: prefix} }
func expectURL(prefix string) browserStep {
	return browserStep{Do: "expectURL", URL: prefix}
}
func shot(name string) browserStep { return browserStep{Do: "shot", Name: name} }
func recordFrames() browserStep    { return browserStep{Do: "frames"} }
func login(user, password string) []browserStep {
	return []browserStep{fill("Username", user), fill("Password", password), click("Log in")}
}

// waitText waits until the element with id shows text (without a reload).
func waitText(id, text string) browserStep { return browserStep{Do: "waitText", Label: id, Text: text} }

// put sends body to u with PUT from the page's browser context.
func put(u, body string) browserStep { return browserStep{Do: "put", URL: u, Value: body} }

// viewport resizes the page ("390x844": a phone); fitsWidth fails when the
// page scrolls sideways.
func viewport(size string) browserStep { return browserStep{Do: "viewport", Value: size} }
func fitsWidth() browserStep           { return browserStep{Do: "fitsWidth"} }

// browserScenario is one row of a scenario table. Name prefixes its
// screenshots' file names; NoJavaScript runs it in a context with
// JavaScript disabled; check asserts what it must end with (every shot is
// checked by checkShots besides).
type browserScenario struct {
	Name         string `json:"name"`
	Start        string `json:"start"`
	NoJavaScript bool   `json:"noJavaScript"`
	// IgnoreHTTPSErrors accepts a stack's self-signed certificate (tls).
	IgnoreHTTPSErrors bool          `json:"ignoreHTTPSErrors"`
	Steps             []browserStep `json:"steps"`
	check             func(t *testing.T, r browserResult)
}

// browserResult is what the script reports for a scenario.
type browserResult struct {
	Name   string        `json:"name"`
	URL    string        `json:"url"` // where the page ended
	Error  string        `json:"error"`
	Shots  []browserShot `json:"shots"`
	Frames []struct {
		URL    string `json:"url"`
		Inputs int    `json:"inputs"` // inputs and buttons
		Text   string `json:"text"`
	} `json:"frames"`
}

// browserShot is a page as a "shot" step saw it.
type browserShot struct {
	Name     string            `json:"name"`
	File     string            `json:"file"`
	URL      string            `json:"url"`
	Status   int               `json:"status"`
	Headers  map[string]string `json:"headers"` // lower-case names
	Text     string            `json:"text"`
	Problems []string          `json:"problems"` // accessibility audit
	// Elements are the page's elements with an id, by id.
	Elements map[string]browserElement `json:"elements"`
}

// browserElement is an element of a page with an id: its text, its value
// (a form field's) and whether it is visible.
type browserElement struct {
	Text    string `json:"text"`
	Value   string `json:"value"`
	Visible bool   `json:"visible"`
}

// shot returns the scenario's shot named name (failing the test without).
func (r browserResult) shot(t *testing.T, name string) browserShot {
	t.Helper()
	for _, s := range r.Shots {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("scenario %s took no screenshot %q", r.Name, name)
	return browserShot{}
}

// requireBrowser returns the Chromium executable (AVIARY_CHROMIUM, else
// chromium on PATH). Without it, or without node, the test fails when
// CI=true (CI must run it: `make test` installs Chromium) and is skipped
// otherwise.
func requireBrowser(t *testing.T) string {
	t.Helper()
	missing := func(what string) {
		msg := what + " is missing: the browser tests need Debian's chromium, node and npm (scripts/ensure-deps --for-tests installs chromium)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(tool)
		}
	}
	if p := os.Getenv("AVIARY_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			missing("AVIARY_CHROMIUM=" + p)
		}
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		missing("chromium")
	}
	return p
}

// artifactsDir is where screenshots go: AVIARY_TEST_ARTIFACTS, else
// var/test-artifacts/screenshots in the repository (gitignored). They
// outlive the test on purpose; CI can keep the directory.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("AVIARY_TEST_ARTIFACTS")
	if dir == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatalf("screenshot directory (set AVIARY_TEST_ARTIFACTS): %v", err)
		}
		dir = filepath.Join(root, "var", "test-artifacts", "screenshots")
	}
	dir, err := filepath.Abs(dir)
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Fatalf("screenshot directory %s: %v", dir, err)
	}
	return dir
}

// repoRoot is the nearest directory above the working directory with a
// go.mod.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// runBrowserScenarios runs the table in one Chromium, logs each
// screenshot's path, and checks each scenario in a subtest.
func runBrowserScenarios(t *testing.T, s *stack, scenarios []browserScenario) {
	t.Helper()
	results := runBrowser(t, s, scenarios)
	for i, sc := range scenarios {
		r := results[i]
		t.Run(sc.Name, func(t *testing.T) {
			for _, shot := range r.Shots {
				t.Logf("screenshot %s: %s", shot.Name, shot.File)
			}
			if r.Error != "" {
				t.Fatalf("scenario ended at %s: %s", r.URL, r.Error)
			}
			checkShots(t, s, r)
			if sc.check != nil {
				sc.check(t, r)
			}
		})
	}
}

// runBrowser runs the scenarios and returns what the script saw, one
// result per scenario.
func runBrowser(t *testing.T, s *stack, scenarios []browserScenario) []browserResult {
	t.Helper()
	chromium := requireBrowser(t)
	modules := npmPackage(t, playwrightPackage, playwrightVersion)
	dir := artifactsDir(t)
	var out struct {
		Version   string          `json:"version"`
		Scenarios []browserResult `json:"scenarios"`
	}
	runNodeScript(t, s, modules, browserScenariosJS,
		map[string]any{"chromium": chromium, "artifacts": dir, "scenarios": scenarios}, &out)
	t.Logf("Chromium %s; screenshots in %s", out.Version, dir)
	if len(out.Scenarios) != len(scenarios) {
		t.Fatalf("the script ran %d scenarios of %d", len(out.Scenarios), len(scenarios))
	}
	return out.Scenarios
}

// checkShots asserts what every page of the web tier must do: pass the
// accessibility audit, refuse to be framed (CSP frame-ancestors and
// X-Frame-Options) and, on a plain-HTTP stack allowed to serve OAuth 1.0a
// (AVIARY_OAUTH_INSECURE_HTTP=true), show the development notice.
func checkShots(t *testing.T, s *stack, r browserResult) {
	t.Helper()
	notice := s.devNotice()
	for _, shot := range r.Shots {
		if err := checkPNG(shot.File); err != nil {
			t.Error(err)
		}
		if len(shot.Problems) > 0 {
			t.Errorf("page %s (%s) fails the accessibility audit: %s", shot.Name, shot.URL, strings.Join(shot.Problems, "; "))
		}
		if !strings.HasPrefix(shot.URL, s.baseURL+"/") {
			continue
		}
		if dev := shot.Elements["dev-notice"]; notice && (!dev.Visible || !strings.Contains(dev.Text, "plain HTTP")) {
			t.Errorf("page %s (%s) does not show the plain-HTTP development notice: %+v", shot.Name, shot.URL, dev)
		}
		if shot.Headers["x-frame-options"] != "DENY" || !strings.Contains(shot.Headers["content-security-policy"], "frame-ancestors 'none'") {
			t.Errorf("page %s may be framed: X-Frame-Options %q, Content-Security-Policy %q", shot.Name,
				shot.Headers["x-frame-options"], shot.Headers["content-security-policy"])
		}
	}
}

// devNotice reports whether the stack's pages must show the plain-HTTP
// development notice (id="dev-notice"): a plain-HTTP stack with
// AVIARY_OAUTH_INSECURE_HTTP=true, the last setting winning as for its
// processes.
func (s *stack) devNotice() bool {
	on := false
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "AVIARY_OAUTH_INSECURE_HTTP="); ok {
			on = v == "true"
		}
	}
	return on && strings.HasPrefix(s.baseURL, "http://")
}

// checkPNG reports whether file is there and starts like a PNG.
func checkPNG(file string) error {
	png, err := os.ReadFile(file)
	if err != nil {
		return fmt.Errorf("screenshot: %w", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		return fmt.Errorf("screenshot %s is not a PNG", file)
	}
	return nil
}

// clientSite is the client's side of a browser test: a local HTTP server
// with the callback (it records every query it gets) and a page that
// frames another (/frame?src=URL) next to a control frame of its own
// (/control, which does render: the check can tell).
type clientSite struct {
	URL string
	mu  sync.Mutex
	got map[string][]url.Values // path -> queries, in order
}

func newClientSite(t *testing.T) *clientSite {
	t.Helper()
	c := &clientSite{got: map[string][]url.Values{}}
	srv := httptest.NewServer(http.HandlerFunc(c.serve))
	t.Cleanup(srv.Close)
	c.URL = srv.URL
	return c
}

func (c *clientSite) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	switch r.URL.Path {
	case "/inaccessible": // the harness's own test: what the audit must catch
		fmt.Fprint(w, `<!doctype html><html><title>Inaccessible</title><body><h2>No main, no h1</h2>
<form><input name="q"><button type="submit"></button><img src="/none.png"></form></body></html>`)
		return
	case "/frame":
		fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Framing</title><main><h1>A page framing another</h1>
<iframe src="%s" title="framed page" width="700" height="300"></iframe>
<iframe src="/control" title="control" width="700" height="100"></iframe></main></html>`, html.EscapeString(r.URL.Query().Get("src")))
		return
	}
	c.mu.Lock()
	c.got[r.URL.Path] = append(c.got[r.URL.Path], r.URL.Query())
	c.mu.Unlock()
	fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Callback</title><main><h1>The client got %s</h1></main></html>`, html.EscapeString(r.URL.RawQuery))
}

// queries returns the queries the site got at path.
func (c *clientSite) queries(path string) []url.Values {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]url.Values(nil), c.got[path]...)
}

// framedURL is the client's page framing target (and a control frame).
func (c *clientSite) framedURL(target string) string {
	return c.URL + "/frame?src=" + url.QueryEscape(target)
}

// checkNotFramed asserts that a scenario started at site.framedURL (with
// recordFrames) saw the control frame render and the Aviary page not.
func checkNotFramed(t *testing.T, s *stack, site *clientSite, r browserResult) {
	t.Helper()
	t.Logf("frames: %+v", r.Frames)
	if len(r.Frames) != 2 {
		t.Fatalf("want the framed page and the control frame, got %+v", r.Frames)
	}
	for _, f := range r.Frames {
		if strings.HasPrefix(f.URL, site.URL+"/control") {
			if !strings.Contains(f.Text, "The client got") {
				t.Errorf("the control frame did not render: %+v", f)
			}
		} else if f.Inputs != 0 || strings.Contains(f.Text, "Log in") || strings.HasPrefix(f.URL, s.baseURL) {
			t.Errorf("the Aviary page rendered in a frame: %+v", f)
		}
	}
}

// TestBrowserHarnessAudit runs the audit on a page made to fail it: each
// fault is reported and the screenshot is a PNG (no Aviary stack: nothing
// of it is used).
func TestBrowserHarnessAudit(t *testing.T) {
	t.Parallel()
	requireBrowser(t)
	site := newClientSite(t)
	r := runBrowser(t, &stack{t: t}, []browserScenario{{Name: "harness-audit", Start: site.URL + "/inaccessible",
		Steps: []browserStep{shot("page")}}})[0]
	if r.Error != "" {
		t.Fatal(r.Error)
	}
	page := r.shot(t, "page")
	t.Logf("screenshot %s: %v", page.File, page.Problems)
	problems := strings.Join(page.Problems, "\n")
	for _, want := range []string{"no lang", "<main>", "<h1>", `<input name="q"`, "has no label", "</button> has no text", "has no alt"} {
		if !strings.Contains(problems, want) {
			t.Errorf("the audit missed %q: %v", want, page.Problems)
		}
	}
	if err := checkPNG(page.File); err != nil {
		t.Error(err)
	}
}
