package render

import (
	"path"
	"strings"

	"github.com/aviary-dev/aviary/storage"
)

// MediaPathPrefix is where the API listener serves processed media
// (api/media's public route): /media/{media_key}/{file}, file being the
// last element of the blob key (media.jpg, media.mp4, preview.jpg).
const MediaPathPrefix = "/media/"

// MediaURLs builds the public, stable URLs of processed media on the
// listener's public base URL (docs/media-upload.md, "Public media URLs").
// A nil *MediaURLs builds none: the fields are then left out.
type MediaURLs struct {
	// Base is the public base URL, e.g. https://aviary.example.
	Base string
}

// NewMediaURLs builds URLs on base (a trailing slash is ignored); an empty
// base builds none (nil).
func NewMediaURLs(base string) *MediaURLs {
	base = strings.TrimRight(base, "/")
	if base == "" {
		return nil
	}
	return &MediaURLs{Base: base}
}

// Blob is the public URL of blob key blobKey of media mediaKey ("" when
// either is empty or u is nil).
func (u *MediaURLs) Blob(mediaKey, blobKey string) string {
	if u == nil || mediaKey == "" || blobKey == "" {
		return ""
	}
	return u.Base + MediaPath(mediaKey, blobKey)
}

// Output is the URL of m's processed copy ("" before it succeeded).
func (u *MediaURLs) Output(m storage.Media) string {
	if m.State != storage.MediaSucceeded {
		return ""
	}
	return u.Blob(m.Key, m.OutputKey)
}

// Preview is the URL of m's poster frame ("" when it has none).
func (u *MediaURLs) Preview(m storage.Media) string {
	if m.State != storage.MediaSucceeded {
		return ""
	}
	return u.Blob(m.Key, m.PreviewKey)
}

// MediaPath is the path of blob key blobKey of media mediaKey under
// MediaPathPrefix.
func MediaPath(mediaKey, blobKey string) string {
	return MediaPathPrefix + mediaKey + "/" + path.Base(blobKey)
}
