package validation

import (
	"strings"
	"testing"
)

func TestIsSHA256Hex(t *testing.T) {
	cases := []struct {
		in   string
		want bool
	}{
		// SHA-256 of "test@example.com", the kind of value clients send.
		{"973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b", true},
		{strings.ToUpper("973dfe463ec85785f5f95af5ba3906eedb2d931c24e69824a89ea65dba4e813b"), true},
		{"test@example.com", false},
		{"+15555550100", false},
		{strings.Repeat("a", 63), false},
		{strings.Repeat("a", 65), false},
		{strings.Repeat("g", 64), false},
		{"", false},
	}
	for _, tc := range cases {
		if got := IsSHA256Hex(tc.in); got != tc.want {
			t.Errorf("IsSHA256Hex(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
