// Package medialibrary serves the advertising API's media library (issue
// 9): an account's collection of the caller's processed uploads, with a
// name, file name and, for videos, a title, description and poster.
// Adding an AMPLIFY_VIDEO also makes it a PREROLL account media; deleting
// the entry soft-deletes that account media too.
package medialibrary

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the medialibrary endpoints need of storage (*postgres.DB).
type Store interface {
	MediaByKey(ctx context.Context, key string) (storage.Media, error)
	ListMediaLibrary(ctx context.Context, f storage.MediaLibraryFilter, opts storage.ListOptions) (storage.Page[storage.MediaLibraryEntry], error)
	MediaLibraryEntry(ctx context.Context, accountID, key string) (storage.MediaLibraryEntry, error)
	AddToMediaLibrary(ctx context.Context, accountID, key string, f storage.MediaLibraryFields, preroll bool) (storage.MediaLibraryEntry, error)
	UpdateMediaLibrary(ctx context.Context, accountID, key string, f storage.MediaLibraryFields) (storage.MediaLibraryEntry, error)
	DeleteMediaLibrary(ctx context.Context, accountID, key string) (storage.MediaLibraryEntry, error)
}

// Deps are the module's dependencies.
type Deps struct {
	Kit   adsx.Kit
	Store Store
	// MediaURLs renders the public URLs of media blobs (media_url,
	// poster_media_url); nil renders them as null.
	MediaURLs *render.MediaURLs
}

// Module serves the medialibrary endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k := m.deps.Kit
	const entry = "/12/accounts/{account_id}/media_library/{media_key}"
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET /12/accounts/{account_id}/media_library",
			Params: []string{"count", "cursor", "media_type", "q"}, Handle: m.list},
		{Pattern: "GET " + entry, Handle: m.get},
		{Pattern: "POST /12/accounts/{account_id}/media_library",
			Params: append([]string{"media_key"}, fieldParams...), Write: true, Handle: m.add},
		{Pattern: "PUT " + entry, Params: fieldParams, Write: true, Handle: m.update},
		{Pattern: "DELETE " + entry, Write: true, Handle: m.delete},
	})
}
