package api_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/aviary-dev/aviary/api"
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// lister is an ads module with list endpoints: it names their specs.
type lister interface{ Lists() []adsx.ListSpec }

// unmappedFields returns, for each spec, the sortable and default fields
// storage/postgres has no column for in the spec's listing.
func unmappedFields(specs []adsx.ListSpec) []string {
	var out []string
	for _, s := range specs {
		if s.Listing == "" {
			out = append(out, fmt.Sprintf("a spec sorted by %q names no Listing", s.Default.Field))
			continue
		}
		for _, f := range slices.Concat(s.Sortable, []string{s.Default.Field}) {
			if _, ok := postgres.SortColumn(s.Listing, f); !ok {
				out = append(out, fmt.Sprintf("listing %s: field %q has no column", s.Listing, f))
			}
		}
	}
	return out
}

// TestListSpecsMapToColumns walks every ads module's list specs (the
// sort_by attributes and the default order each list endpoint offers) and
// asks storage/postgres for the column of each field in the spec's
// listing. A module's Lists must hold every adsx.ListSpec its package
// writes, so a new list cannot be left out of the walk.
func TestListSpecsMapToColumns(t *testing.T) {
	modules := reflect.TypeFor[api.AdsModules]()
	fields := 0
	for i := range modules.NumField() {
		typ := modules.Field(i).Type
		pkg := typ.Elem().PkgPath()
		written := specLiterals(t, pkg)
		l, ok := reflect.Zero(typ).Interface().(lister)
		if !ok {
			if written > 0 {
				t.Errorf("%s writes %d adsx.ListSpec but its Module has no Lists method", pkg, written)
			}
			continue
		}
		specs := l.Lists()
		if len(specs) != written {
			t.Errorf("%s: Lists returns %d specs, the package writes %d adsx.ListSpec literals", pkg, len(specs), written)
		}
		for _, problem := range unmappedFields(specs) {
			t.Errorf("%s: %s (add it to sortColumns in storage/postgres/ads_sort.go)", pkg, problem)
		}
		for _, s := range specs {
			fields += len(s.Sortable) + 1
		}
	}
	t.Logf("walked %d fields of the ads lists", fields)
	if fields < 70 {
		t.Errorf("walked only %d fields of the ads lists: modules were missed", fields)
	}
}

// TestUnmappedFieldsCatchesAWrongSpec: a field no listing maps, a field of
// another listing and a spec without a listing are each reported.
func TestUnmappedFieldsCatchesAWrongSpec(t *testing.T) {
	good := adsx.ListSpec{Listing: storage.ListingCampaigns, Sortable: adsx.Sortable{"name"}, Default: storage.Sort{Field: "created_at"}}
	bad := []adsx.ListSpec{
		{Listing: storage.ListingCampaigns, Sortable: adsx.Sortable{"name", "c.name"}, Default: storage.Sort{Field: "created_at"}},
		{Listing: storage.ListingCampaigns, Sortable: adsx.Sortable{"list_size"}, Default: storage.Sort{Field: "created_at"}},
		{Sortable: adsx.Sortable{"name"}, Default: storage.Sort{Field: "created_at"}},
	}
	if got := unmappedFields([]adsx.ListSpec{good}); len(got) != 0 {
		t.Fatalf("good spec reported: %v", got)
	}
	for _, s := range bad {
		if got := unmappedFields([]adsx.ListSpec{s}); len(got) != 1 {
			t.Errorf("%+v: reported %v, want one problem", s, got)
		}
	}
}

// specLiterals counts the adsx.ListSpec composite literals in the non-test
// files of the module package pkg (a package under api/).
func specLiterals(t *testing.T, pkg string) int {
	t.Helper()
	rel, ok := strings.CutPrefix(pkg, "github.com/aviary-dev/aviary/api/")
	if !ok {
		t.Fatalf("%s is not under api/", pkg)
	}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(rel, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no Go files (%v)", rel, err)
	}
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(node ast.Node) bool {
			if lit, ok := node.(*ast.CompositeLit); ok {
				if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "ListSpec" {
					n++
				}
			}
			return true
		})
	}
	return n
}
