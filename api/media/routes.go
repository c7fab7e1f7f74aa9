// Package media serves the chunked media upload endpoints
// (docs/media-upload.md): initialize records an upload session, append
// streams each segment into its own blob object and records it, finalize
// checks the segments, moves the media to pending and enqueues its
// processing (media:process, handled by workers/media), and STATUS reports
// how far processing is. Every endpoint acts for a user: an upload is only
// visible to its owner, any other caller gets the 404 of an unknown id.
package media

import (
	"log/slog"
	"time"

	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
)

// Enum names this package registers on the validator.
const (
	enumCategory = "media_category"
	enumType     = "media_type"
)

// Body caps (docs/media-upload.md, "Endpoints").
const (
	// initializeMaxBody caps initialize's JSON object.
	initializeMaxBody = 1 << 20
	// appendMaxBody caps one append request: a 5 MiB segment, base64-encoded
	// in JSON (4/3 of it) or in a multipart form, plus the envelope. The
	// one-shot upload has the same cap (its media is one segment).
	appendMaxBody = 8 << 20
)

// Deps is what the media upload endpoints need.
type Deps struct {
	Store Store
	Blobs BlobStore
	// Queue, when set, receives a finalized upload's processing task at
	// once. Nil, or an enqueue that fails, leaves it to the workers' media
	// sweeper (the fallback).
	Queue tasks.Enqueuer
	// ImageWait is how long an image's finalize (or one-shot upload)
	// waits for the worker's result before answering pending (0: it does
	// not wait). See settle.
	ImageWait time.Duration
	Validator *validation.Validator
	Logger    *slog.Logger
	Clock     func() time.Time
}

// Module is the media upload feature.
type Module struct{ Deps }

// New builds the module and registers its enums and rules on d.Validator.
func New(d Deps) *Module {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = time.Now
	}
	d.Validator.MustRegisterEnum(enumCategory, storage.MediaCategories)
	d.Validator.MustRegisterEnum(enumType, storage.MediaTypes)
	registerRules(d.Validator)
	return &Module{Deps: d}
}

// Routes lists the media upload endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{
			Pattern: "POST /2/media/upload/initialize",
			Auth:    auth.UserContext.Writes().Needs(oauth2.MediaWrite),
			Limit:   httpx.Limit{Name: "media_upload_initialize", Requests: 500, Scope: httpx.PerUser},
			Body:    httpx.JSONBody(initializeMaxBody),
			Handle:  m.initialize,
		},
		{
			// JSON first: it is assumed for a body sent without a
			// Content-Type (a multipart body cannot be read without its
			// boundary parameter).
			Pattern: "POST /2/media/upload/{id}/append",
			Auth:    auth.UserContext.Writes().Needs(oauth2.MediaWrite),
			Limit:   httpx.Limit{Name: "media_upload_append", Requests: 50_000, Scope: httpx.PerUser},
			Body:    httpx.Body{MaxBytes: appendMaxBody, Types: []string{httpx.ContentJSON, httpx.ContentMultipart}},
			Handle:  m.appendSegment,
		},
		{
			// No Body rule: finalize takes no parameters, so whatever body a
			// client sends (none, `{}`, a form) is ignored, never read and
			// never refused for its content type. (A rule with types would
			// answer 415 to a client that labels an empty body text/plain.)
			Pattern: "POST /2/media/upload/{id}/finalize",
			Auth:    auth.UserContext.Writes().Needs(oauth2.MediaWrite),
			Limit:   httpx.Limit{Name: "media_upload_finalize", Requests: 500, Scope: httpx.PerUser},
			Handle:  m.finalize,
		},
		{
			// The one-shot upload: initialize, one append and finalize in
			// one request (upload.go), for media of at most one segment.
			Pattern: "POST /2/media/upload",
			Auth:    auth.UserContext.Writes().Needs(oauth2.MediaWrite),
			Limit:   httpx.Limit{Name: "media_upload", Requests: 500, Scope: httpx.PerUser},
			Body:    httpx.Body{MaxBytes: appendMaxBody, Types: []string{httpx.ContentJSON, httpx.ContentMultipart}},
			Handle:  m.upload,
		},
		{
			Pattern: "GET /2/media/upload",
			Auth:    auth.UserContext.Needs(oauth2.MediaWrite),
			Limit:   httpx.Limit{Name: "media_upload_status", Requests: 1000, Scope: httpx.PerUser},
			Query:   []string{"command", "media_id"},
			Handle:  m.status,
		},
	}
}
