package archtest

import (
	"slices"
	"strings"
	"testing"
)

// loadModule loads the packages of the module this test runs in.
func loadModule(t *testing.T) []Package {
	t.Helper()
	root, err := ModuleRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestModuleFollowsLayout is the check `make test` runs: every import of
// every package of the module against Rules.
func TestModuleFollowsLayout(t *testing.T) {
	pkgs := loadModule(t)
	for _, p := range pkgs {
		if p.Error != "" {
			t.Logf("%s does not load (its imports are still checked): %s", short(p.ImportPath), p.Error)
		}
	}
	for _, v := range Check(pkgs) {
		t.Error(v)
	}
}

// TestLoadListsTheModule checks that Load really runs go list: it finds
// this package and tasks with their imports.
func TestLoadListsTheModule(t *testing.T) {
	pkgs := loadModule(t)
	find := func(rel string) Package {
		i := slices.IndexFunc(pkgs, func(p Package) bool { return p.ImportPath == m(rel) })
		if i < 0 {
			t.Fatalf("go list did not find %s", rel)
		}
		return pkgs[i]
	}
	cases := []struct{ pkg, imports, testImports string }{
		{"internal/archtest", "os/exec", "testing"},
		{"tasks", "github.com/hibiken/asynq", "testing"},
	}
	for _, c := range cases {
		p := find(c.pkg)
		if !slices.Contains(p.Imports, c.imports) {
			t.Errorf("%s: Imports %v lack %s", c.pkg, p.Imports, c.imports)
		}
		if !slices.Contains(slices.Concat(p.TestImports, p.XTestImports), c.testImports) {
			t.Errorf("%s: test imports lack %s", c.pkg, c.testImports)
		}
	}
}

// TestDecode checks the go list stream is read record by record, broken
// packages are kept with their imports, and a foreign module is refused.
func TestDecode(t *testing.T) {
	cases := []struct {
		name, in string
		want     []Package
		wantErr  string
	}{
		{name: "broken package kept",
			in: `{"ImportPath":"` + m("api/posts") + `","Imports":["` + m("api/media") + `"],"Module":{"Path":"` + Module + `"},"Error":{"Err":"undefined: x"}}
{"ImportPath":"` + m("tasks") + `","TestImports":["testing"],"XTestImports":["errors"],"Module":{"Path":"` + Module + `"}}`,
			want: []Package{
				{ImportPath: m("api/posts"), Imports: ms("api/media"), Error: "undefined: x"},
				{ImportPath: m("tasks"), TestImports: []string{"testing"}, XTestImports: []string{"errors"}},
			}},
		{name: "foreign module", in: `{"ImportPath":"example.com/x","Module":{"Path":"example.com/x"}}`,
			wantErr: "want " + Module},
		{name: "garbage", in: `{"ImportPath":`, wantErr: "decoding go list output"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decode(strings.NewReader(c.in))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !slices.EqualFunc(got, c.want, samePackage) {
				t.Errorf("got %+v, %v\nwant %+v", got, err, c.want)
			}
		})
	}
}

// samePackage compares two packages field by field.
func samePackage(a, b Package) bool {
	return a.ImportPath == b.ImportPath && a.Error == b.Error &&
		slices.Equal(a.Imports, b.Imports) && slices.Equal(a.TestImports, b.TestImports) &&
		slices.Equal(a.XTestImports, b.XTestImports)
}

// TestModuleRootOutsideAModule checks a directory without go.mod is refused.
func TestModuleRootOutsideAModule(t *testing.T) {
	t.Setenv("GO111MODULE", "on")
	t.Setenv("GOFLAGS", "")
	if root, err := ModuleRoot(t.TempDir()); err == nil {
		t.Errorf("ModuleRoot(temp dir) = %q, want an error", root)
	}
}
