package storage_test

import (
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

func TestComplianceJobOfKey(t *testing.T) {
	tests := map[string]int64{
		storage.ComplianceUploadKey(12, 34): 34,
		storage.ComplianceResultKey(12, 34): 34,
		"compliance/12/x/upload.txt":        0,
		"compliance/12/34":                  0,
		"compliance/12/34/a/b":              0,
		"media/12/34/upload.txt":            0,
		"compliance/x/34/upload.txt":        0,
	}
	for key, want := range tests {
		got, ok := storage.ComplianceJobOfKey(key)
		if got != want || ok != (want != 0) {
			t.Errorf("ComplianceJobOfKey(%q) = %d, %v; want %d", key, got, ok, want)
		}
	}
}
