package outboundtest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Probe is one URL an outbound fetch must not reach (docs/ssrf.md).
type Probe struct {
	// Class groups the probes in the table: loopback, unspecified,
	// private, link-local, ipv6, dns, redirect.
	Class string
	Name  string
	URL   string
}

// Targets are the counting listeners the probes aim at: one on
// 127.0.0.1 and, where IPv6 is available, one on [::1].
type Targets struct {
	V4, V6 *Target
}

// ListenTargets opens the targets, closed when the test ends.
func ListenTargets(t testing.TB) Targets {
	t.Helper()
	return Targets{V4: MustListen(t, "tcp", "127.0.0.1:0"), V6: Listen(t, "tcp6", "[::1]:0")}
}

// Accepted is how many connections the targets got together.
func (ts Targets) Accepted() int64 {
	n := ts.V4.Accepted()
	if ts.V6 != nil {
		n += ts.V6.Accepted()
	}
	return n
}

// Probes are the address forms of issue 32's table, each aimed at the
// targets' ports where the address would reach them (loopback and
// unspecified forms); the others (private, link-local) would leave the
// host, and must be refused before any connection is attempted.
func (ts Targets) Probes() []Probe {
	p := ts.V4.Port()
	ps := []Probe{
		{"loopback", "127.0.0.1", "http://127.0.0.1:" + p + "/x"},
		{"loopback", "127.1 (short form)", "http://127.1:" + p + "/x"},
		{"loopback", "0x7f000001 (hex)", "http://0x7f000001:" + p + "/x"},
		{"loopback", "2130706433 (decimal)", "http://2130706433:" + p + "/x"},
		{"loopback", "0177.0.0.1 (octal)", "http://0177.0.0.1:" + p + "/x"},
		{"loopback", "127.0.0.2", "http://127.0.0.2:" + p + "/x"},
		{"loopback", "localhost", "http://localhost:" + p + "/x"},
		{"loopback", "LOCALHOST. (case, root dot)", "http://LOCALHOST.:" + p + "/x"},
		{"unspecified", "0.0.0.0", "http://0.0.0.0:" + p + "/x"},
		{"unspecified", "0", "http://0:" + p + "/x"},
		{"private", "10.0.0.1", "http://10.0.0.1:" + p + "/x"},
		{"private", "172.16.0.1", "http://172.16.0.1:" + p + "/x"},
		{"private", "172.31.255.254", "http://172.31.255.254:" + p + "/x"},
		{"private", "192.168.1.1", "http://192.168.1.1:" + p + "/x"},
		{"private", "100.64.0.1 (carrier-grade NAT)", "http://100.64.0.1:" + p + "/x"},
		{"link-local", "169.254.169.254 (metadata)", "http://169.254.169.254/latest/meta-data/"},
		{"link-local", "[fd00:ec2::254] (metadata, v6)", "http://[fd00:ec2::254]/latest/meta-data/"},
		{"link-local", "[fe80::1]", "http://[fe80::1]:" + p + "/x"},
		{"ipv6", "[::ffff:127.0.0.1] (mapped)", "http://[::ffff:127.0.0.1]:" + p + "/x"},
		{"ipv6", "[::ffff:7f00:1] (mapped, hex)", "http://[::ffff:7f00:1]:" + p + "/x"},
		{"ipv6", "[::ffff:a00:1] (mapped 10.0.0.1)", "http://[::ffff:a00:1]:" + p + "/x"},
		{"ipv6", "[::127.0.0.1] (compatible)", "http://[::127.0.0.1]:" + p + "/x"},
		{"ipv6", "[64:ff9b::7f00:1] (NAT64)", "http://[64:ff9b::7f00:1]:" + p + "/x"},
		{"ipv6", "[2002:7f00:1::] (6to4)", "http://[2002:7f00:1::]:" + p + "/x"},
		{"ipv6", "[fc00::1] (unique local)", "http://[fc00::1]:" + p + "/x"},
		{"ipv6", "[fd00::1] (unique local)", "http://[fd00::1]:" + p + "/x"},
	}
	if ts.V6 != nil {
		p6 := ts.V6.Port()
		ps = append(ps,
			Probe{"loopback", "[::1]", "http://[::1]:" + p6 + "/x"},
			Probe{"loopback", "[0:0:0:0:0:0:0:1]", "http://[0:0:0:0:0:0:0:1]:" + p6 + "/x"},
			Probe{"unspecified", "[::]", "http://[::]:" + p6 + "/x"},
		)
	}
	return ps
}

// RedirectCodes are the redirects every probe is also reached through.
var RedirectCodes = []int{http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
	http.StatusTemporaryRedirect, http.StatusPermanentRedirect}

// Redirector is a server a fetch may reach (its address is given to the
// client's allow-list) answering /r?code=N&to=URL with redirect N to URL.
type Redirector struct {
	*httptest.Server
}

// NewRedirector starts a Redirector, closed when the test ends.
func NewRedirector(t testing.TB) *Redirector {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code := http.StatusFound
		switch r.URL.Query().Get("code") {
		case "301":
			code = http.StatusMovedPermanently
		case "303":
			code = http.StatusSeeOther
		case "307":
			code = http.StatusTemporaryRedirect
		case "308":
			code = http.StatusPermanentRedirect
		}
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return &Redirector{srv}
}

// Addr is the redirector's host:port, for an allow-list.
func (r *Redirector) Addr() string { return r.Listener.Addr().String() }

// To is the redirector's URL answering code to target.
func (r *Redirector) To(code int, target string) string {
	return r.URL + "/r?" + url.Values{"code": {strconv.Itoa(code)}, "to": {target}}.Encode()
}

// Case is a probe as sent: directly ("direct") or through a redirect of
// the Redirector (the code).
type Case struct {
	Probe
	Via string
	// Sent is the URL the fetch is given.
	Sent string
}

// Cases are every probe, directly and through each redirect code of r.
func (ts Targets) Cases(r *Redirector) []Case {
	var out []Case
	for _, p := range ts.Probes() {
		out = append(out, Case{p, "direct", p.URL})
		for _, code := range RedirectCodes {
			out = append(out, Case{p, strconv.Itoa(code), r.To(code, p.URL)})
		}
	}
	return out
}

// Table collects a caller's outcome per case, for the test log (and
// docs/ssrf.md).
type Table struct {
	rows  []string
	count map[string]int
}

// Add records c's outcome.
func (tb *Table) Add(c Case, outcome string) {
	if tb.count == nil {
		tb.count = map[string]int{}
	}
	tb.rows = append(tb.rows, fmt.Sprintf("%-12s %-34s %-7s %s", c.Class, c.Name, c.Via, outcome))
	tb.count[outcome]++
}

// String is the table, then the count per outcome.
func (tb *Table) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%-12s %-34s %-7s %s\n", "class", "probe", "via", "outcome")
	for _, r := range tb.rows {
		sb.WriteString(r + "\n")
	}
	outcomes := make([]string, 0, len(tb.count))
	for o := range tb.count {
		outcomes = append(outcomes, o)
	}
	sort.Strings(outcomes)
	for _, o := range outcomes {
		fmt.Fprintf(&sb, "%5d  %s\n", tb.count[o], o)
	}
	return sb.String()
}
