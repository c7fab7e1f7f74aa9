package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/internal/outbound/outboundtest"
)

// outcome names how a probe failed, for the table of docs/ssrf.md.
func outcome(err error) string {
	var refused *RefusedAddressError
	switch {
	case err == nil:
		return "FETCHED"
	case errors.As(err, &refused):
		return "refused at dial"
	case strings.Contains(err.Error(), "no such host"):
		return "no such host"
	default:
		return "failed: " + err.Error()
	}
}

// TestSSRFProbeTable: every probe of issue 32's table (loopback, private,
// link-local and metadata, IPv6 forms, unspecified), directly and through
// each redirect code from an allowed server, and names resolving to those
// (a rebinding name among them), fails without the counting targets seeing
// a connection.
func TestSSRFProbeTable(t *testing.T) {
	t.Parallel()
	targets := outboundtest.ListenTargets(t)
	redirector := outboundtest.NewRedirector(t)
	allow, err := ParseAllowList(redirector.Addr())
	if err != nil {
		t.Fatal(err)
	}
	loop := netip.MustParseAddr("127.0.0.1")
	public := netip.MustParseAddr("192.0.2.1") // TEST-NET-1: passes the guard, reaches nothing
	res := outboundtest.NewResolver(map[string][][]netip.Addr{
		"loopback.test": {{loop}},
		"private.test":  {{netip.MustParseAddr("10.0.0.1")}},
		"metadata.test": {{netip.MustParseAddr("169.254.169.254")}},
		"v6loop.test":   {{netip.MustParseAddr("::1")}},
		"mapped.test":   {{netip.MustParseAddr("::ffff:127.0.0.1")}},
		"mixed.test":    {{public, loop}},
		"rebind.test":   {{public}, {loop}},
	})
	// The address forms go through the system resolver, as in
	// production; the names through the rebinding resolver.
	sys := New(Config{Allow: allow, Timeout: time.Second})
	c := New(Config{Allow: allow, Timeout: time.Second, Resolver: res.Net()})
	p := targets.V4.Port()
	probes := targets.Probes()
	for _, name := range []string{"loopback.test", "private.test", "metadata.test", "v6loop.test", "mapped.test", "mixed.test", "rebind.test"} {
		probes = append(probes, outboundtest.Probe{Class: "dns", Name: name, URL: "http://" + name + ":" + p + "/x"})
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-12s %-34s %-8s %s\n", "class", "probe", "via", "outcome")
	fetch := func(probe outboundtest.Probe, via, u string) {
		client := sys
		if probe.Class == "dns" {
			client = c
		}
		body, err := client.Open(t.Context(), u, nil)
		if err == nil {
			body.Close()
			t.Errorf("%s via %s: fetched", probe.Name, via)
		}
		fmt.Fprintf(&table, "%-12s %-34s %-8s %s\n", probe.Class, probe.Name, via, outcome(err))
	}
	for _, probe := range probes {
		fetch(probe, "direct", probe.URL)
		for _, code := range outboundtest.RedirectCodes {
			fetch(probe, fmt.Sprint(code), redirector.To(code, probe.URL))
		}
	}
	// Rebinding: the name answered public first (that dial passed the guard
	// and reached nothing), then loopback: each dial is checked anew.
	for range 3 {
		_, err := c.Open(t.Context(), "http://rebind.test:"+p+"/x", nil)
		fmt.Fprintf(&table, "%-12s %-34s %-8s %s\n", "dns", "rebind.test (again)", "direct", outcome(err))
	}
	if n := res.Asked("rebind.test"); n < 2 {
		t.Errorf("rebind.test was resolved %d times; the test wants it resolved at each dial", n)
	}
	t.Log("\n" + table.String())
	if n := targets.Accepted(); n != 0 {
		t.Fatalf("the targets accepted %d connections, want none", n)
	}
	if strings.Contains(table.String(), "FETCHED") {
		t.Fatal("a probe was fetched")
	}
}
