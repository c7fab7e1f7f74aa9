package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlatformDescription: AVIARY_OPENAPI_FILE unset serves Aviary's own
// schemas; a readable description is loaded with its version; an
// unreadable or malformed one stops start-up naming the variable.
func TestPlatformDescription(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(good, []byte(`{"info":{"version":"2.167"},"paths":{"/2/a":{"get":{}}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"paths":`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, version, err string
	}{
		{name: "unset"},
		{name: "loaded", file: good, version: "2.167"},
		{name: "missing", file: filepath.Join(dir, "none.json"), err: "AVIARY_OPENAPI_FILE"},
		{name: "malformed", file: bad, err: "AVIARY_OPENAPI_FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clearConfigEnv(t, map[string]string{"AVIARY_OPENAPI_FILE": tt.file})
			cfg, err := bindConfig(flag.NewFlagSet("api", flag.ContinueOnError))
			if err != nil {
				t.Fatal(err)
			}
			p, err := platformDescription(cfg)
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want one naming %s", err, tt.err)
				}
			case err != nil:
				t.Fatal(err)
			case tt.version == "" && p != nil:
				t.Errorf("a description was loaded without the variable")
			case tt.version != "" && (p == nil || p.Version != tt.version):
				t.Errorf("loaded %+v, want version %s", p, tt.version)
			}
		})
	}
}
