package httpx

import (
	"net/http"

	"github.com/aviary-dev/aviary/api/auth"
)

// AppNoter is a ResponseWriter that wants to know the app a request was
// authenticated for (the API's request recorder, outside authentication:
// it cannot read the context authentication makes).
type AppNoter interface {
	NoteApp(app int64)
}

// noteApp tells the first AppNoter among w and the writers it wraps the
// caller's app. Stack mounts it just inside authentication.
func noteApp(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := auth.PrincipalFrom(r.Context()); ok && p.App.ID != 0 {
			for u := w; u != nil; {
				if n, ok := u.(AppNoter); ok {
					n.NoteApp(p.App.ID)
					break
				}
				x, ok := u.(interface{ Unwrap() http.ResponseWriter })
				if !ok {
					break
				}
				u = x.Unwrap()
			}
		}
		next.ServeHTTP(w, r)
	})
}
