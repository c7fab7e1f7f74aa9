package console

import "testing"

func TestMicros(t *testing.T) {
	t.Parallel()
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		amount   *int64
		currency string
		want     string
	}{
		{nil, "USD", ""},
		{n(0), "USD", "0 USD"},
		{n(100_000_000), "USD", "100 USD"},
		{n(1_500_000), "USD", "1.5 USD"},
		{n(10_000), "USD", "0.01 USD"},
		{n(1_234_567), "KWD", "1.234567 KWD"},
		{n(-2_050_000), "EUR", "-2.05 EUR"},
		{n(7_000_000), "", "7"},
	} {
		if got := micros(tc.amount, tc.currency); got != tc.want {
			t.Errorf("micros(%v, %q) = %q, want %q", tc.amount, tc.currency, got, tc.want)
		}
	}
}
