package outbound

import (
	"net/netip"
	"testing"
)

func TestRefused(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		refused bool
	}{
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"10.0.0.1", true},
		{"172.16.0.1", true},
		{"172.31.255.254", true},
		{"192.168.1.1", true},
		{"169.254.169.254", true},
		{"fe80::1", true},
		{"fd00::1", true},
		{"fc00::1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"224.0.0.1", true},
		{"ff02::1", true},
		{"100.64.0.1", true},
		{"100.127.255.254", true},
		{"255.255.255.255", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.1.2.3", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::7f00:1", true}, // NAT64 of 127.0.0.1
		{"2002:a00:1::", true},    // 6to4 of 10.0.0.1
		{"::127.0.0.1", true},     // IPv4-compatible
		{"8.8.8.8", false},
		{"172.32.0.1", false},
		{"100.128.0.1", false},
		{"93.184.216.34", false},
		{"::ffff:93.184.216.34", false},
		{"64:ff9b::5db8:d822", false}, // NAT64 of 93.184.216.34
		{"2606:4700::1111", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := Refused(netip.MustParseAddr(tt.addr)); got != tt.refused {
				t.Fatalf("Refused(%s) = %v, want %v", tt.addr, got, tt.refused)
			}
		})
	}
}

func TestAllowList(t *testing.T) {
	t.Parallel()
	allow, err := ParseAllowList(" 127.0.0.1:8080, Images.Example:443,[::1]:9000,,")
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	tests := []struct {
		addr  string
		allow bool
	}{
		{"127.0.0.1:8080", true},
		{"[::ffff:127.0.0.1]:8080", true},
		{"images.example:443", true},
		{"IMAGES.EXAMPLE:443", true},
		{"[::1]:9000", true},
		{"127.0.0.1:8081", false},
		{"images.example:80", false},
		{"localhost:8080", false},
		{"nonsense", false},
	}
	for _, tt := range tests {
		if got := allow.Allows(tt.addr); got != tt.allow {
			t.Errorf("Allows(%q) = %v, want %v", tt.addr, got, tt.allow)
		}
	}
	anyPort, err := ParseAllowList("localhost:*")
	if err != nil {
		t.Fatalf("parse localhost:*: %v", err)
	}
	for addr, want := range map[string]bool{"localhost:3000": true, "LOCALHOST:1": true, "127.0.0.1:3000": false, "localhost.example:3000": false} {
		if got := anyPort.Allows(addr); got != want {
			t.Errorf("localhost:* Allows(%q) = %v, want %v", addr, got, want)
		}
	}
	for _, bad := range []string{"127.0.0.1", "host:", ":80"} {
		if _, err := ParseAllowList(bad); err == nil {
			t.Errorf("ParseAllowList(%q) succeeded, want an error", bad)
		}
	}
}
