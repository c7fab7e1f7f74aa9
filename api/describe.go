package api

import (
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

// describe builds the description of this listener's endpoints and serves
// it with its rendered view. The route table is fixed when the server is
// built, so both are built once; an error is a wiring bug.
func (s *Server) describe() {
	doc, err := selfdoc.Build(s.Modules.Described(s.Sandbox), selfdoc.Options{
		Version: orDev(s.Version), ServerURL: s.PublicURL, Platform: s.Platform,
	})
	if err != nil {
		panic(err)
	}
	platform := ""
	if s.Platform != nil {
		platform = s.Platform.Version
	}
	page, err := doc.HTML(orDev(s.Version), platform)
	if err != nil {
		panic(err)
	}
	s.mux.Handle("GET "+OpenAPIPath, doc.HandlerJSON())
	s.mux.Handle("GET "+DocsPath, selfdoc.HandlerHTML(page))
}

// orDev is version, "dev" when empty (as x-aviary-version says).
func orDev(version string) string {
	if version == "" {
		return "dev"
	}
	return version
}
