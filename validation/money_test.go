package validation

import (
	"testing"
	"time"
)

// TestMicroAmountError: an amount in micros is a whole number of its
// currency's minor unit, whatever that unit is.
func TestMicroAmountError(t *testing.T) {
	tests := []struct {
		micros int64
		code   string
		ok     bool
	}{
		{1_000_000, "JPY", true}, {1_500_000, "JPY", false}, {999_999, "KRW", false},
		{10_000, "USD", true}, {15_000, "USD", false}, {100, "EUR", false},
		{1_000, "KWD", true}, {1_500, "KWD", false}, {3_000, "TND", true},
		{1, "ZZZ", true}, // not a currency: its own rule refuses it
	}
	for _, tt := range tests {
		if msg := MicroAmountError(tt.micros, tt.code); (msg == "") != tt.ok {
			t.Errorf("MicroAmountError(%d, %s) = %q, want ok %v", tt.micros, tt.code, msg, tt.ok)
		}
	}
	for code, want := range map[string]int{"JPY": 0, "VND": 0, "USD": 2, "EUR": 2, "KWD": 3, "BHD": 3} {
		if got, ok := MinorUnits(code); !ok || got != want {
			t.Errorf("MinorUnits(%s) = %d, %v; want %d", code, got, ok, want)
		}
	}
}

// TestOffsetError: offsets from -12:00 to +14:00 name places; others do not.
func TestOffsetError(t *testing.T) {
	for _, tt := range []struct {
		offset string
		ok     bool
	}{{"Z", true}, {"-12:00", true}, {"+14:00", true}, {"+05:45", true}, {"-12:01", false}, {"+14:01", false}, {"-24:00", false}, {"+23:59", false}} {
		v, err := time.Parse(time.RFC3339, "2024-01-01T00:00:00"+tt.offset)
		if err != nil {
			t.Fatalf("parse %s: %v", tt.offset, err)
		}
		if msg := OffsetError(v); (msg == "") != tt.ok {
			t.Errorf("OffsetError(%s) = %q, want ok %v", tt.offset, msg, tt.ok)
		}
	}
}

func TestIsCurrency(t *testing.T) {
	for code, want := range map[string]bool{"USD": true, "EUR": true, "JPY": true, "XOF": true, "ZWG": true,
		"ABC": false, "usd": false, "US": false, "SDB": false, "XAU": false, "XXX": false, "D U": false} {
		if got := IsCurrency(code); got != want {
			t.Errorf("IsCurrency(%q) = %v, want %v", code, got, want)
		}
	}
}
