package web

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

//go:embed static/aviary.css
var stylesheet []byte

// htmx is htmx.org's minified build, vendored from npm at development time
// (web/static/htmx.LICENSE; docs/console.md): the console's only script,
// served from this origin, never from a CDN.
//
//go:embed static/htmx.min.js
var htmx []byte

// StylesheetPath is where the pages' stylesheet is served (cmd/aviary
// mounts Stylesheet there); the layout links it. Same origin as the pages,
// as the CSP's style-src 'self' asks.
const StylesheetPath = "/i/static/aviary.css"

// HTMXPath is where the console's pages load htmx from.
const HTMXPath = "/i/static/htmx.min.js"

// Stylesheet serves the embedded stylesheet.
func Stylesheet() http.Handler {
	return staticAsset("aviary.css", "text/css; charset=utf-8", stylesheet)
}

// HTMX serves the vendored htmx.
func HTMX() http.Handler {
	return staticAsset("htmx.min.js", "text/javascript; charset=utf-8", htmx)
}

// staticAsset serves an embedded file (GET and HEAD), cacheable for a day
// and revalidated by an ETag naming its content (which changes only with
// the binary).
func staticAsset(name, contentType string, body []byte) http.Handler {
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=86400")
		h.Set("ETag", etag)
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
	})
}
