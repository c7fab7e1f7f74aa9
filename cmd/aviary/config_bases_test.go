package main

import (
	"io"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api/auth"
)

// TestSignatureBasesSetting: AVIARY_OAUTH_SIGNATURE_BASES is off by
// default, the platform's three hosts in dev mode unless "none", and a bad
// URL stops start-up naming the variable.
func TestSignatureBasesSetting(t *testing.T) {
	tests := []struct {
		value   string
		dev     bool
		want    string // bases joined by commas
		wantErr bool
	}{
		{"", false, "", false},
		{"", true, auth.DevSignatureBases, false},
		{"none", true, "", false},
		{"NONE", false, "", false},
		{"https://api.x.com", false, "https://api.x.com", false},
		{"http://localhost:9000, https://upload.x.com", true, "http://localhost:9000,https://upload.x.com", false},
		{"api.x.com", false, "", true},
		{"https://api.x.com/2", true, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			clearConfigEnv(t, map[string]string{"AVIARY_OAUTH_SIGNATURE_BASES": tt.value})
			cfg, _, err := parseFlags("api", nil, io.Discard)
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "AVIARY_OAUTH_SIGNATURE_BASES") {
					t.Fatalf("parseFlags = %v; want an error naming the variable", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags: %v", err)
			}
			cfg.dev = tt.dev
			bases, err := cfg.signatureBases()
			var got []string
			for _, b := range bases {
				got = append(got, b.String())
			}
			if err != nil || strings.Join(got, ",") != tt.want {
				t.Errorf("bases %v %v, want %s", got, err, tt.want)
			}
		})
	}
}
