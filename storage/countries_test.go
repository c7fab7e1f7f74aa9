package storage

import (
	"slices"
	"testing"
)

func TestCountryCodesAreTheAssignedList(t *testing.T) {
	if len(CountryCodes) != 249 {
		t.Fatalf("%d codes, want the 249 assigned ISO 3166-1 alpha-2 codes", len(CountryCodes))
	}
	if !slices.IsSorted(CountryCodes) {
		t.Fatal("CountryCodes is not sorted (IsCountryCode searches it)")
	}
	for i, c := range CountryCodes {
		if len(c) != 2 || c[0] < 'A' || c[0] > 'Z' || c[1] < 'A' || c[1] > 'Z' {
			t.Errorf("%q is not two upper-case letters", c)
		}
		if i > 0 && CountryCodes[i-1] == c {
			t.Errorf("%q twice", c)
		}
	}
}

func TestIsCountryCode(t *testing.T) {
	cases := []struct {
		code string
		want bool
	}{
		{"US", true}, {"GB", true}, {"FR", true}, {"JP", true}, {"BR", true},
		{"AD", true}, {"ZW", true}, {"AX", true}, {"SS", true}, {"BQ", true}, {"CW", true}, {"SX", true},
		{"AQ", true}, {"BV", true}, {"UM", true}, {"PS", true}, {"TW", true}, {"EH", true},
		{"us", false}, {"Us", false}, {"", false}, {"U", false}, {"USA", false}, {" US", false},
		{"UK", false}, {"EU", false}, {"XK", false}, {"AN", false}, {"YU", false}, {"CS", false},
		{"ZZ", false}, {"AA", false}, {"QM", false}, {"12", false},
	}
	for _, tc := range cases {
		if got := IsCountryCode(tc.code); got != tc.want {
			t.Errorf("IsCountryCode(%q) = %v, want %v", tc.code, got, tc.want)
		}
	}
}
