package ids

import (
	"regexp"
	"testing"
	"time"
)

func TestFormatAndTime(t *testing.T) {
	tests := []struct {
		id   int64
		text string
		at   time.Time
	}{
		// Creation time computed independently: ((id >> 22) + epoch) ms.
		{1460323737035677698, "1460323737035677698", time.Date(2021, 11, 15, 19, 8, 5, 69e6, time.UTC)},
		{1 << 22, "4194304", time.UnixMilli(Epoch + 1).UTC()},
	}
	for _, tt := range tests {
		if got := Format(tt.id); got != tt.text {
			t.Errorf("Format(%d) = %s", tt.id, got)
		}
		if got := Time(tt.id); !got.Equal(tt.at) {
			t.Errorf("Time(%d) = %s, want %s", tt.id, got, tt.at)
		}
	}
}

func TestBase36(t *testing.T) {
	for id, want := range map[int64]string{35: "z", 36: "10", 1460323737035677698: "b3exk7f1hhj6"} {
		if got := Base36(id); got != want {
			t.Errorf("Base36(%d) = %s, want %s", id, got, want)
		}
	}
}

func TestToken(t *testing.T) {
	re := regexp.MustCompile(`^[A-Za-z0-9]{40}$`)
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		tok, err := Token(40)
		if err != nil || !re.MatchString(tok) || seen[tok] {
			t.Fatalf("token %q err %v (duplicate %v)", tok, err, seen[tok])
		}
		seen[tok] = true
	}
}

func TestIsUUID(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"6f1c2b3a-0d4e-4f5a-9b8c-7d6e5f4a3b2c", true},
		{"6F1C2B3A-0D4E-4F5A-9B8C-7D6E5F4A3B2C", true},
		{"", false},
		{"1", false},
		{"6f1c2b3a0d4e4f5a9b8c7d6e5f4a3b2c", false},     // no dashes
		{"6f1c2b3a-0d4e-4f5a-9b8c-7d6e5f4a3b2g", false}, // not hex
		{"6f1c2b3a-0d4e-4f5a-9b8c_7d6e5f4a3b2c", false}, // wrong separator
		{"' OR 1=1 --                         ", false},
		{"6f1c2b3a-0d4e-4f5a-9b8c-7d6e5f4a3b2c ", false},
	} {
		if got := IsUUID(tc.s); got != tc.want {
			t.Errorf("IsUUID(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}
