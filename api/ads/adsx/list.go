package adsx

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/storage"
)

// List parameter names and bounds.
const (
	DefaultCount = 200
	MaxCount     = 1000
)

// ListParams are the names of the shared list parameters.
var ListParams = []string{"count", "cursor", "sort_by", "with_deleted", "with_total_count"}

// Sortable are the attributes a list may be sorted by: field names of
// its listing, never columns (storage/postgres maps each to its column).
type Sortable []string

// ListSpec is how one list endpoint pages.
type ListSpec struct {
	// Listing is the store's list the endpoint reads; its sortable fields
	// and Default's field must map to columns there.
	Listing storage.Listing
	// Sortable are the sort_by attributes; none means sort_by is refused.
	Sortable Sortable
	// Default is the order without sort_by.
	Default storage.Sort
	// DefaultCount and MaxCount bound count (defaults 200 and 1000).
	DefaultCount, MaxCount int
}

// List parses the shared list parameters the endpoint takes (those absent
// from its Route.Params are never sent: the stack refuses them) into store
// options. Errors are recorded on p.
func (k Kit) List(p *Params, spec ListSpec) storage.ListOptions {
	def, maxCount := spec.DefaultCount, spec.MaxCount
	if def == 0 {
		def = DefaultCount
	}
	if maxCount == 0 {
		maxCount = MaxCount
	}
	opts := storage.ListOptions{Count: def, Sort: spec.Default}
	if c := p.Int("count", 1, maxCount); c != nil {
		opts.Count = *c
	}
	if s, ok := p.sortBy(spec.Sortable); ok {
		opts.Sort = s
	}
	opts.WithDeleted = p.Flag("with_deleted", false)
	opts.WithTotal = p.Flag("with_total_count", false)
	p.fingerprint = p.queryFingerprint()
	if cur, ok := p.value("cursor", false); ok {
		if opts.WithTotal {
			p.fail(CodeExclusiveParameters, "cursor", "with_total_count and cursor are exclusive parameters", cur)
			return opts
		}
		pos, err := k.Cursors.decode(cur, p.fingerprint)
		if err != nil {
			p.fail(CodeInvalidParameter, "cursor", "The cursor is invalid or belongs to another query", cur)
			return opts
		}
		p.echo["cursor"] = cur
		opts.After = &pos
	}
	return opts
}

// sortBy parses sort_by=<attribute>-asc|-desc against sortable.
func (p *Params) sortBy(sortable Sortable) (storage.Sort, bool) {
	v, ok := p.value("sort_by", false)
	if !ok {
		return storage.Sort{}, false
	}
	i := strings.LastIndex(v, "-")
	attr, dir := v[:max(i, 0)], v[i+1:]
	if i < 0 || (dir != "asc" && dir != "desc") || !slices.Contains(sortable, attr) {
		names := slices.Sorted(slices.Values(sortable))
		p.fail(CodeInvalidParameter, "sort_by", fmt.Sprintf("Expected <attribute>-asc or <attribute>-desc with attribute one of [%s], got %q for sort_by", strings.Join(names, ", "), v), v)
		return storage.Sort{}, false
	}
	p.echo["sort_by"] = []string{v}
	return storage.Sort{Field: attr, Desc: dir == "desc"}, true
}

// queryFingerprint identifies the query a cursor pages: the route, its
// path values and every parameter but the page's own (cursor, count).
func (p *Params) queryFingerprint() string {
	var b strings.Builder
	b.WriteString(p.pattern)
	for _, name := range slices.Sorted(maps.Keys(p.values)) {
		if name == "cursor" || name == "count" || name == "with_total_count" {
			continue
		}
		fmt.Fprintf(&b, "\x00%s=%s", name, strings.Join(p.values[name], ","))
	}
	for _, name := range pathNames(p.pattern) {
		fmt.Fprintf(&b, "\x00{%s}=%v", name, p.echo[name])
	}
	sum := sha256.Sum256([]byte(b.String()))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

// Cursors signs and checks the opaque next_cursor values, so a cursor
// cannot be forged, altered or used with another query. Every API replica
// must share the key.
type Cursors struct {
	key []byte
}

// NewCursors returns a signer with key (at least 32 bytes).
func NewCursors(key []byte) (*Cursors, error) {
	if len(key) < 32 {
		return nil, fmt.Errorf("ads cursor key: %d bytes, want at least 32", len(key))
	}
	return &Cursors{key: slices.Clone(key)}, nil
}

type cursorBody struct {
	storage.Position
	Query string `json:"q"`
}

// encode returns the cursor continuing after pos for the query fp.
func (c *Cursors) encode(pos storage.Position, fp string) string {
	body, _ := json.Marshal(cursorBody{Position: pos, Query: fp})
	payload := base64.RawURLEncoding.EncodeToString(body)
	return payload + "." + c.mac(payload)
}

func (c *Cursors) mac(payload string) string {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// decode checks a cursor's signature and query and returns its position.
func (c *Cursors) decode(cursor, fp string) (storage.Position, error) {
	payload, mac, ok := strings.Cut(cursor, ".")
	if !ok || !hmac.Equal([]byte(mac), []byte(c.mac(payload))) {
		return storage.Position{}, fmt.Errorf("cursor signature")
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return storage.Position{}, fmt.Errorf("cursor encoding: %w", err)
	}
	var body cursorBody
	if err := json.Unmarshal(raw, &body); err != nil {
		return storage.Position{}, fmt.Errorf("cursor body: %w", err)
	}
	if body.Query != fp {
		return storage.Position{}, fmt.Errorf("cursor of another query")
	}
	return body.Position, nil
}
