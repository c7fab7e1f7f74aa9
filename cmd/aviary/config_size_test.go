package main

import (
	"io"
	"strings"
	"testing"
)

// TestComplianceMaxUploadSetting: AVIARY_COMPLIANCE_MAX_UPLOAD takes bytes
// or a binary-unit size, defaults to 4 GiB, and a value that is not a
// positive size stops start-up naming the variable.
func TestComplianceMaxUploadSetting(t *testing.T) {
	tests := []struct {
		value string
		want  int64 // 0: an error
	}{
		{"", 4 << 30},
		{"1048576", 1 << 20},
		{"1KiB", 1 << 10},
		{"512MiB", 512 << 20},
		{"4GiB", 4 << 30},
		{" 2 TiB ", 2 << 40},
		{"4GB", 0},
		{"0", 0},
		{"-1KiB", 0},
		{"8388608TiB", 0}, // overflows int64
		{"lots", 0},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			clearConfigEnv(t, map[string]string{"AVIARY_COMPLIANCE_MAX_UPLOAD": tt.value})
			cfg, _, err := parseFlags("api", nil, io.Discard)
			if tt.want == 0 {
				if err == nil || !strings.Contains(err.Error(), "AVIARY_COMPLIANCE_MAX_UPLOAD") || !strings.Contains(err.Error(), "size") {
					t.Fatalf("parseFlags = %v; want an error naming the variable and a size", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseFlags: %v", err)
			}
			if cfg.ComplianceMaxUpload != tt.want {
				t.Errorf("ComplianceMaxUpload = %d, want %d", cfg.ComplianceMaxUpload, tt.want)
			}
		})
	}
}
