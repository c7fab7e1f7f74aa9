package api

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/selfdoc"
)

// Paths of the description Aviary serves of itself (docs/openapi.md).
const (
	OpenAPIPath = "/2/openapi.json"
	DocsPath    = "/_aviary/docs"
)

// ownEndpoints are the routes the server itself serves beside the feature
// modules that the description lists: the description, its rendered view
// and the health report. None takes credentials. /healthz, /readyz and
// /metrics (operations, not API) and the mounts (blob URLs, the web tier,
// the queue dashboard) are not described.
func ownEndpoints() []httpx.Endpoint {
	return []httpx.Endpoint{
		{Pattern: "GET " + OpenAPIPath},
		{Pattern: "GET " + DocsPath},
		{Pattern: "GET /_aviary/health", Response: healthReport{}},
	}
}

// Described lists every endpoint the served description covers on a
// listener: the modules' endpoints and the server's own.
func (m Modules) Described(sandbox bool) []httpx.Endpoint {
	return append(m.endpoints(sandbox), ownEndpoints()...)
}

// describe serves the description of this listener's endpoints and its
// rendered view. The route table is fixed when the server is built; both
// are built on the first request for either (most servers built in tests
// are never asked), an error being a wiring bug answered with 500.
func (s *Server) describe() {
	endpoints := s.Modules.Described(s.Sandbox)
	build := sync.OnceValues(func() (*selfdoc.Document, error) {
		return selfdoc.Build(endpoints, selfdoc.Options{Version: orDev(s.Version), ServerURL: s.PublicURL, Platform: s.Platform})
	})
	page := sync.OnceValues(func() ([]byte, error) {
		doc, err := build()
		if err != nil {
			return nil, err
		}
		platform := ""
		if s.Platform != nil {
			platform = s.Platform.Version
		}
		return doc.HTML(orDev(s.Version), platform)
	})
	s.mux.Handle("GET "+OpenAPIPath, httpx.Adapt(s.Errors, s.Logger, func(w http.ResponseWriter, r *http.Request) error {
		doc, err := build()
		if err != nil {
			return fmt.Errorf("describe the API: %w", err)
		}
		doc.HandlerJSON().ServeHTTP(w, r)
		return nil
	}))
	s.mux.Handle("GET "+DocsPath, httpx.Adapt(s.Errors, s.Logger, func(w http.ResponseWriter, r *http.Request) error {
		html, err := page()
		if err != nil {
			return fmt.Errorf("render the API description: %w", err)
		}
		selfdoc.HandlerHTML(html).ServeHTTP(w, r)
		return nil
	}))
}

// orDev is version, "dev" when empty (as x-aviary-version says).
func orDev(version string) string {
	if version == "" {
		return "dev"
	}
	return version
}
