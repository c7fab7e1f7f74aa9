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

// StylesheetPath is where the pages' stylesheet is served (cmd/aviary
// mounts Stylesheet there); the layout links it. Same origin as the pages,
// as the CSP's style-src 'self' asks.
const StylesheetPath = "/i/static/aviary.css"

// stylesheetETag names the embedded stylesheet's content: it changes only
// with the binary.
var stylesheetETag = func() string {
	sum := sha256.Sum256(stylesheet)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()

// Stylesheet serves the embedded stylesheet (GET and HEAD), cacheable for
// a day and revalidated by its ETag.
func Stylesheet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "text/css; charset=utf-8")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "public, max-age=86400")
		h.Set("ETag", stylesheetETag)
		http.ServeContent(w, r, "aviary.css", time.Time{}, bytes.NewReader(stylesheet))
	})
}
