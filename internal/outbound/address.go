package outbound

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// blockedPrefixes are the address ranges no outbound request may connect to
// (besides what netip classifies as loopback, private, link-local,
// multicast or unspecified): addresses that reach the host itself, its
// network, or infrastructure rather than the public internet.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT (RFC 6598)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking (RFC 2544)
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, broadcast
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated), ::, ::1
	netip.MustParsePrefix("fec0::/10"),      // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),       // discard-only (RFC 6666)
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use IPv4/IPv6 translation
}

// embeddedIPv4 are IPv6 ranges that carry an IPv4 address (NAT64 in the
// last 4 bytes, 6to4 in bytes 2-5); the embedded address is checked too.
var embeddedIPv4 = []struct {
	prefix netip.Prefix
	offset int
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// Refused reports whether ip is one an outbound request must not reach:
// loopback, private (RFC 1918, RFC 4193), link-local (the 169.254.169.254
// metadata address included), unspecified, multicast, carrier-grade NAT,
// reserved ranges, and IPv4-mapped or otherwise embedded forms of those.
func Refused(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() {
		return true
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsMulticast() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	for _, e := range embeddedIPv4 {
		if e.prefix.Contains(ip) {
			b := ip.As16()
			return Refused(netip.AddrFrom4([4]byte(b[e.offset : e.offset+4])))
		}
	}
	return false
}

// RefusedAddressError is returned when a request would connect to a refused
// address; no connection was made.
type RefusedAddressError struct {
	// Addr is the resolved address and port the fetch would have reached.
	Addr string
	// Host is the host as the URL (or redirect) named it: an IP literal or
	// a name. Only logs may pair a name with Addr (see Checker).
	Host string
}

// Named reports whether the refused connection was to a host name rather
// than an IP literal: what the name resolved to is then not the caller's
// to learn.
func (e *RefusedAddressError) Named() bool {
	_, err := netip.ParseAddr(strings.Trim(e.Host, "[]"))
	return err != nil
}

func (e *RefusedAddressError) Error() string {
	return fmt.Sprintf("connection to %s refused: not a public address", e.Addr)
}

// AllowList is a set of host:port entries a request may reach even when
// they are refused addresses (a local image server or webhook receiver in
// development and tests). The port "*" stands for any port of the host.
type AllowList map[string]bool

// anyPort is the port of an entry that allows every port of its host.
const anyPort = "*"

// ParseAllowList parses comma-separated host:port entries
// (AVIARY_FETCH_ALLOWLIST, AVIARY_WEBHOOK_ALLOW); hosts are compared
// case-insensitively and IP addresses in their canonical form; host:*
// allows every port of host.
func ParseAllowList(s string) (AllowList, error) {
	allow := AllowList{}
	for _, entry := range strings.Split(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		key, err := allowKey(entry)
		if err != nil {
			return nil, fmt.Errorf("fetch allow-list entry %q: want host:port: %w", entry, err)
		}
		allow[key] = true
	}
	return allow, nil
}

// Allows reports whether addr (host:port, a name or an IP) is listed.
func (a AllowList) Allows(addr string) bool {
	if len(a) == 0 {
		return false
	}
	key, err := allowKey(addr)
	if err != nil {
		return false
	}
	if a[key] {
		return true
	}
	host, _, _ := net.SplitHostPort(key)
	return a[net.JoinHostPort(host, anyPort)]
}

// allowKey normalises host:port for comparison.
func allowKey(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if host == "" || port == "" {
		return "", fmt.Errorf("missing host or port")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		host = ip.Unmap().WithZone("").String()
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}
