package web

import "net/http"

// ContentSecurityPolicy is sent with every page: nothing but the page's own
// origin for styles and images, no scripts, no plugins, no <base>, and no
// framing anywhere (frame-ancestors 'none', with X-Frame-Options DENY for
// older browsers). form-action is left out on purpose: browsers apply it to
// the redirect that follows a consent form, which goes to the client's
// callback URL on another origin.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; frame-ancestors 'none'"

// SecureHeaders sets the security headers of every web response.
func SecureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
