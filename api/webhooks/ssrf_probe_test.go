package webhooks_test

import (
	"testing"

	"github.com/aviary-dev/aviary/api/webhooks"
	domain "github.com/aviary-dev/aviary/domain/webhooks"
	"github.com/aviary-dev/aviary/internal/outbound"
	"github.com/aviary-dev/aviary/internal/outbound/outboundtest"
)

// TestCRCSSRFProbes: the CRC check (registration, PUT and the workers'
// CRC sweeper all send it with webhooks.NewClient) fails every probe of
// docs/ssrf.md, direct and through each redirect code from an allowed
// receiver (a redirect is an answer, never followed), and the targets see
// no connection.
func TestCRCSSRFProbes(t *testing.T) {
	t.Parallel()
	targets := outboundtest.ListenTargets(t)
	redirector := outboundtest.NewRedirector(t)
	allow, err := outbound.ParseAllowList(redirector.Addr())
	if err != nil {
		t.Fatal(err)
	}
	client := webhooks.NewClient(allow)
	var table outboundtest.Table
	for _, tc := range targets.Cases(redirector) {
		o := domain.Check(t.Context(), client, tc.Sent, "secret")
		if o.OK {
			t.Errorf("%s via %s: the CRC passed", tc.Name, tc.Via)
		}
		table.Add(tc, o.Failure)
	}
	t.Log("\n" + table.String())
	if n := targets.Accepted(); n != 0 {
		t.Fatalf("the targets accepted %d connections, want none", n)
	}
}
