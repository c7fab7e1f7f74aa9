// Package outbound is the one guarded HTTP client through which Aviary
// reaches URLs its clients give it: product image checks (workers/catalogs),
// webhook CRC checks (api/webhooks, workers/webhooks) and, later, webhook
// deliveries. Both tiers import it; it imports the standard library only
// (internal/archtest, internal-leaves).
//
// The guard: every connection, the first and each redirect's, is checked on
// the address DNS resolved to, just before it connects (net.Dialer's
// ControlContext), so no loopback, private, link-local, metadata, reserved
// or IPv4-embedding IPv6 address is reached, whatever name or redirect led
// there; an AllowList of host:port entries (a development setting) lifts the
// check for those entries only. Requests are bounded in time, bodies in size
// and redirects in number. See docs/webhooks.md, "The guard".
package outbound
