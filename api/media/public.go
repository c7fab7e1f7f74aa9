package media

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"

	"github.com/aviary-dev/aviary/api/apierr"
	public "github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// PublicPattern is the public, unauthenticated route of processed media
// (docs/media-upload.md, "Public media URLs"): file is the last element of
// the processed copy's or the poster frame's blob key (render.MediaPath in package render).
const PublicPattern = "GET " + public.MediaPathPrefix + "{media_key}/{file}"

// publicCacheControl: a media key's processed copy never changes.
const publicCacheControl = "public, max-age=31536000, immutable"

// ServePublic serves PublicPattern: the processed copy or poster frame of
// a media whose processing succeeded; any other media, file or key is a
// 404.
func (m *Module) ServePublic(w http.ResponseWriter, r *http.Request) error {
	key, file := r.PathValue("media_key"), r.PathValue("file")
	notFound := apierr.NotFound("media", "media_key", key)
	media, err := m.Store.MediaByKey(r.Context(), key)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return notFound
	case err != nil:
		return fmt.Errorf("load media %s: %w", key, err)
	}
	blobKey, contentType, ok := publicBlob(media, file)
	if !ok {
		return notFound
	}
	etag := strconv.Quote(key + "/" + file)
	if r.Header.Get("If-None-Match") == etag {
		publicHeaders(w.Header(), etag)
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	body, info, err := m.Blobs.Get(r.Context(), blobKey)
	if err != nil {
		return fmt.Errorf("open media %s blob %s: %w", key, blobKey, err)
	}
	defer body.Close()
	if contentType == "" {
		contentType = info.ContentType
	}
	h := w.Header()
	publicHeaders(h, etag)
	h.Set("Content-Type", contentType)
	if info.Size >= 0 {
		h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(w, body); err != nil {
		m.Logger.WarnContext(r.Context(), "media download interrupted", "media_key", key, "err", err)
	}
	return nil
}

// publicBlob is the blob media's public file names and its content type
// ("": the blob's own); ok is false unless media succeeded and file is its
// processed copy or poster frame.
func publicBlob(media storage.Media, file string) (blobKey, contentType string, ok bool) {
	if media.State != storage.MediaSucceeded {
		return "", "", false
	}
	switch {
	case media.OutputKey != "" && file == path.Base(media.OutputKey):
		return media.OutputKey, media.OutputType, true
	case media.PreviewKey != "" && file == path.Base(media.PreviewKey):
		return media.PreviewKey, "", true
	}
	return "", "", false
}

// publicHeaders are the headers of every public media answer: long-lived
// caching, and no sniffing or active content (the bytes are uploads).
func publicHeaders(h http.Header, etag string) {
	h.Set("Cache-Control", publicCacheControl)
	h.Set("ETag", etag)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
}
