package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// listed is the part of one `go list -json` record that Load reads.
type listed struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Module       *struct{ Path string }
	Error        *struct{ Err string }
}

// ModuleRoot returns the directory of the main module's go.mod as
// `go env GOMOD` sees it from dir.
func ModuleRoot(dir string) (string, error) {
	out, err := goCmd(dir, "env", "GOMOD")
	if err != nil {
		return "", err
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("archtest: %s is not inside a Go module", dir)
	}
	return filepath.Dir(gomod), nil
}

// Load lists every package of the module rooted at root with
// `go list -e -deps=false -json ./...`. Packages that do not compile are
// still returned, with their imports and Error set; only a failure of
// `go list` itself, or a module other than Module, is an error.
func Load(root string) ([]Package, error) {
	out, err := goCmd(root, "list", "-e", "-deps=false",
		"-json=ImportPath,Imports,TestImports,XTestImports,Module,Error", "./...")
	if err != nil {
		return nil, err
	}
	return decode(bytes.NewReader(out))
}

// decode reads the stream of JSON records `go list -json` prints.
func decode(r io.Reader) ([]Package, error) {
	var pkgs []Package
	dec := json.NewDecoder(r)
	for {
		var l listed
		err := dec.Decode(&l)
		if errors.Is(err, io.EOF) {
			return pkgs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("archtest: decoding go list output: %w", err)
		}
		if l.Module != nil && l.Module.Path != Module {
			return nil, fmt.Errorf("archtest: %s is in module %s, want %s", l.ImportPath, l.Module.Path, Module)
		}
		pkgs = append(pkgs, l.pkg())
	}
}

// pkg converts a go list record.
func (l listed) pkg() Package {
	p := Package{ImportPath: l.ImportPath, Imports: l.Imports,
		TestImports: l.TestImports, XTestImports: l.XTestImports}
	if l.Error != nil {
		p.Error = l.Error.Err
	}
	return p
}

// goCmd runs the go command in dir and returns its standard output.
func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("archtest: go %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}
