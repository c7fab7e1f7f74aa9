package storagetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMinIOBinaryLookup(t *testing.T) {
	tmp := t.TempDir()
	explicit := fakeBinary(t, filepath.Join(tmp, "explicit", "minio-custom"), 0o755)
	notExec := fakeBinary(t, filepath.Join(tmp, "noexec", "minio"), 0o644)
	tools := filepath.Join(tmp, "tools")
	toolsBin := fakeBinary(t, filepath.Join(tools, "minio"), 0o755)
	home := filepath.Join(tmp, "home")
	homeBin := fakeBinary(t, filepath.Join(home, ".cache", "aviary", "bin", "minio"), 0o755)
	pathDir := filepath.Join(tmp, "path")
	pathBin := fakeBinary(t, filepath.Join(pathDir, "minio"), 0o755)
	empty := t.TempDir()

	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"AVIARY_MINIO_BIN wins", map[string]string{"AVIARY_MINIO_BIN": explicit, "AVIARY_TOOLS_DIR": tools, "PATH": pathDir}, explicit, ""},
		{"AVIARY_MINIO_BIN not executable", map[string]string{"AVIARY_MINIO_BIN": notExec, "AVIARY_TOOLS_DIR": tools}, "", "AVIARY_MINIO_BIN"},
		{"tools dir before PATH", map[string]string{"AVIARY_TOOLS_DIR": tools, "PATH": pathDir}, toolsBin, ""},
		{"default tools dir under HOME", map[string]string{"HOME": home, "PATH": pathDir}, homeBin, ""},
		{"PATH as last resort", map[string]string{"AVIARY_TOOLS_DIR": empty, "PATH": pathDir}, pathBin, ""},
		{"not found", map[string]string{"AVIARY_TOOLS_DIR": empty, "PATH": empty}, "", "make tools"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"AVIARY_MINIO_BIN", "AVIARY_TOOLS_DIR", "PATH", "HOME"} {
				t.Setenv(k, tc.env[k])
			}
			got, err := minioBinary()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("minioBinary() = %q, %v; want an error mentioning %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("minioBinary() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func fakeBinary(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
	return path
}
