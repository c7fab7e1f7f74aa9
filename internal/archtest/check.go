package archtest

import (
	"cmp"
	"slices"
	"strings"
)

// Package is what Check needs to know of one package: its full import path
// and the full import paths its files import.
type Package struct {
	ImportPath   string
	Imports      []string // non-test files
	TestImports  []string // _test.go files of the package itself
	XTestImports []string // _test.go files of package <name>_test
	Error        string   // load error, if any; the imports are still checked
}

// Violation is one import that breaks a rule.
type Violation struct {
	Pkg    string // full import path of the importing package
	Import string // full import path it imports
	Tests  bool   // whether the import is in _test.go files
	Rule   string // Rule.Name
	Reason string // Rule.Reason
}

// String reads like "api/compliance imports api/posts: <reason>", with
// module paths shortened and " (tests)" after a package whose _test.go
// files hold the import.
func (v Violation) String() string {
	where := short(v.Pkg)
	if v.Tests {
		where += " (tests)"
	}
	return where + " imports " + short(v.Import) + ": " + v.Reason
}

// Check returns every import of pkgs that breaks one of Rules, sorted by
// package, then code before tests, then import. An import of the package
// by its own external tests is never a violation.
func Check(pkgs []Package) []Violation {
	var out []Violation
	for _, p := range pkgs {
		if !inModule(p.ImportPath) {
			continue
		}
		out = append(out, checkImports(p.ImportPath, p.Imports, Code)...)
		tests := slices.Concat(p.TestImports, p.XTestImports)
		out = append(out, checkImports(p.ImportPath, tests, Tests)...)
	}
	slices.SortFunc(out, compareViolations)
	return out
}

// checkImports checks the imports of one kind of files of pkg, each
// distinct import once.
func checkImports(pkg string, imports []string, files Files) []Violation {
	var out []Violation
	seen := map[string]bool{}
	for _, imp := range imports {
		if imp == pkg || seen[imp] {
			continue
		}
		seen[imp] = true
		if r, broken := firstBroken(pkg, imp, files); broken {
			out = append(out, Violation{Pkg: pkg, Import: imp, Tests: files == Tests,
				Rule: r.Name, Reason: r.Reason})
		}
	}
	return out
}

// firstBroken returns the first rule of Rules that applies to pkg and files
// and forbids imp.
func firstBroken(pkg, imp string, files Files) (Rule, bool) {
	for _, r := range Rules {
		if r.Files&files != 0 && r.Pkgs(pkg) && r.forbids(imp) {
			return r, true
		}
	}
	return Rule{}, false
}

// forbids reports whether the rule forbids importing imp.
func (r Rule) forbids(imp string) bool {
	if r.Allow != nil {
		return !r.Allow(imp)
	}
	return r.Deny(imp)
}

// compareViolations orders by package, code before tests, then import.
func compareViolations(a, b Violation) int {
	if c := cmp.Compare(a.Pkg, b.Pkg); c != 0 {
		return c
	}
	if a.Tests != b.Tests {
		if a.Tests {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.Import, b.Import)
}

// short returns a module path relative to the module, any other as is.
func short(path string) string {
	if r, ok := rel(path); ok {
		return r
	}
	return path
}

// Format lists violations one per line.
func Format(vs []Violation) string {
	lines := make([]string, len(vs))
	for i, v := range vs {
		lines[i] = v.String()
	}
	return strings.Join(lines, "\n")
}
