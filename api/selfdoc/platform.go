package selfdoc

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// Platform is the platform's OpenAPI description, read once at start-up
// (AVIARY_OPENAPI_FILE). It is third-party material the project does not
// redistribute (docs/openapi-conformance.md); the running server copies the
// schemas of the operations it shares with it into its own document.
type Platform struct {
	// Version is the description's info.version.
	Version string
	doc     platformDoc
}

type platformDoc struct {
	Info       struct{ Version string }             `json:"info"`
	Paths      map[string]map[string]map[string]any `json:"paths"`
	Components map[string]map[string]map[string]any `json:"components"`
}

// ParsePlatform reads a description (OpenAPI 3 JSON).
func ParsePlatform(raw []byte) (*Platform, error) {
	var p Platform
	if err := json.Unmarshal(raw, &p.doc); err != nil {
		return nil, fmt.Errorf("selfdoc: the platform's description: %w", err)
	}
	if len(p.doc.Paths) == 0 {
		return nil, fmt.Errorf("selfdoc: the platform's description has no paths")
	}
	p.Version = p.doc.Info.Version
	return &p, nil
}

// LoadPlatform reads the description at file.
func LoadPlatform(file string) (*Platform, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("selfdoc: read the platform's description: %w", err)
	}
	return ParsePlatform(raw)
}

// Operation is the platform's operation on method and path (the
// description's own path template), nil when it has none.
func (p *Platform) Operation(method, path string) map[string]any {
	return p.doc.Paths[path][strings.ToLower(method)]
}

// Methods are the methods the platform describes on path (upper case).
func (p *Platform) Methods(path string) []string {
	var out []string
	for m := range p.doc.Paths[path] {
		switch m {
		case "get", "put", "post", "delete", "patch", "head", "options", "trace":
			out = append(out, strings.ToUpper(m))
		}
	}
	return out
}

// Paths are the description's path templates.
func (p *Platform) Paths() []string {
	out := make([]string, 0, len(p.doc.Paths))
	for path := range p.doc.Paths {
		out = append(out, path)
	}
	return out
}

// Component is a component of the description ("schemas", "parameters"),
// nil when it has none of that name.
func (p *Platform) Component(kind, name string) map[string]any {
	return p.doc.Components[kind][name]
}

// Param is one parameter of an operation, resolved: Raw is as the
// operation lists it (possibly a $ref).
type Param struct {
	Name, In string
	Required bool
	Raw      map[string]any
}

// Parameters are the operation's parameters (op from Operation), with
// the path item's shared ones, $refs resolved.
func (p *Platform) Parameters(op map[string]any) []Param {
	list, _ := op["parameters"].([]any)
	var out []Param
	for _, item := range list {
		raw, _ := item.(map[string]any)
		resolved := raw
		if ref, ok := raw["$ref"].(string); ok {
			if kind, name, ok := splitRef(ref); ok {
				resolved = p.Component(kind, name)
			}
		}
		if resolved == nil {
			continue
		}
		name, _ := resolved["name"].(string)
		in, _ := resolved["in"].(string)
		req, _ := resolved["required"].(bool)
		out = append(out, Param{Name: name, In: in, Required: req, Raw: raw})
	}
	return out
}

// splitRef splits "#/components/<kind>/<name>".
func splitRef(ref string) (kind, name string, ok bool) {
	rest, ok := strings.CutPrefix(ref, "#/components/")
	if !ok {
		return "", "", false
	}
	kind, name, ok = strings.Cut(rest, "/")
	return kind, name, ok && !strings.Contains(name, "/")
}

// refsIn lists every $ref inside v.
func refsIn(v any) []string {
	var refs []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if r, ok := x["$ref"].(string); ok {
				refs = append(refs, r)
			}
			for _, c := range x {
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	return refs
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = deepCopy(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = deepCopy(c)
		}
		return out
	}
	return v
}
