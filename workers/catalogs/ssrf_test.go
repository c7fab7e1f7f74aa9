package catalogs

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/internal/outbound/outboundtest"
)

// TestImageCheckSSRFProbes: the catalog image check, with the fetcher the
// worker builds (cmd/aviary: outbound.New with the fetch allow-list, here
// holding only the redirector), fails every probe of docs/ssrf.md, direct
// and through each redirect code, as refused_address (an IP literal) or
// unreachable (a name), and the targets see no connection.
func TestImageCheckSSRFProbes(t *testing.T) {
	t.Parallel()
	targets := outboundtest.ListenTargets(t)
	redirector := outboundtest.NewRedirector(t)
	allow, err := outbound.ParseAllowList(redirector.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c := &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow, Timeout: 2 * time.Second})}
	var table outboundtest.Table
	for _, tc := range targets.Cases(redirector) {
		f := c.Check(t.Context(), tc.Sent)
		if f == nil {
			t.Errorf("%s via %s: the image check passed", tc.Name, tc.Via)
			table.Add(tc, "FETCHED")
			continue
		}
		if f.Rule != RuleRefusedAddress && f.Rule != RuleUnreachable {
			t.Errorf("%s via %s: %s, want %s or %s", tc.Name, tc.Via, f.Rule, RuleRefusedAddress, RuleUnreachable)
		}
		table.Add(tc, f.Rule)
	}
	t.Log("\n" + table.String())
	if n := targets.Accepted(); n != 0 {
		t.Fatalf("the targets accepted %d connections, want none", n)
	}
}
