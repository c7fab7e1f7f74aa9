package web

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"net/http"
	"time"
)

// htmx is htmx.org's minified build, vendored from npm at development time
// (web/static/htmx.LICENSE; docs/console.md): the console's only script,
// served from this origin, never from a CDN.
//
//go:embed static/htmx.min.js
var htmx []byte

// HTMXPath is where the console's pages load htmx from.
const HTMXPath = "/i/static/htmx.min.js"

var htmxETag = func() string {
	sum := sha256.Sum256(htmx)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// HTMX serves the vendored htmx (GET and HEAD), cacheable for a day and
// revalidated by its ETag.
func HTMX() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=86400")
		h.Set("ETag", htmxETag)
		http.ServeContent(w, r, "htmx.min.js", time.Time{}, bytes.NewReader(htmx))
	})
}
