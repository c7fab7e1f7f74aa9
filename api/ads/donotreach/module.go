// Package donotreach serves the advertising API's donotreach endpoints.
package donotreach

import (
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
)

// Store is what the donotreach endpoints need of storage (*postgres.DB).
type Store interface {
}

// Deps are the module's dependencies.
type Deps = adsx.Deps[Store]

// Module serves the donotreach endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return m.deps.Kit.Endpoints(nil)
}
