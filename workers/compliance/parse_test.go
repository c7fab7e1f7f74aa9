package compliance

import "testing"

// TestParseID: 1 to 19 decimal digits, positive, within int64.
func TestParseID(t *testing.T) {
	for in, want := range map[string]int64{
		"1": 1, "00012": 12, "9223372036854775807": 9223372036854775807,
		"0": 0, "000": 0, "9223372036854775808": 0, "9999999999999999999": 0, "12345678901234567890": 0,
		"": 0, "-1": 0, "+1": 0, "1a": 0, " 1": 0, "1.0": 0,
	} {
		got, ok := parseID([]byte(in))
		if ok != (want != 0) || (ok && got != want) {
			t.Errorf("parseID(%q) = %d, %v; want %d, %v", in, got, ok, want, want != 0)
		}
	}
}
