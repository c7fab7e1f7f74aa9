package medialibrary

import (
	"fmt"
	"strings"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// untitled is the name of an entry whose name was never set.
const untitled = "Untitled"

// Media types (media_type) by storage media kind.
var mediaTypeOfKind = map[string]string{
	storage.MediaPhoto:       "IMAGE",
	storage.MediaAnimatedGIF: "GIF",
	storage.MediaVideo:       "VIDEO",
}

// mediaTypes are the media_type values, in the API's order.
var mediaTypes = []string{"GIF", "IMAGE", "VIDEO"}

// kindOfMediaType is the storage media kind of a media_type value.
func kindOfMediaType(t string) string {
	for kind, mt := range mediaTypeOfKind {
		if mt == t {
			return kind
		}
	}
	return ""
}

// libraryObject is the API's media library object.
type libraryObject struct {
	MediaKey       string  `json:"media_key"`
	Name           string  `json:"name"`
	FileName       *string `json:"file_name"`
	Title          *string `json:"title"`
	Description    *string `json:"description"`
	MediaType      string  `json:"media_type"`
	MediaCategory  string  `json:"media_category"`
	MediaStatus    string  `json:"media_status"`
	MediaURL       *string `json:"media_url"`
	PosterMediaURL *string `json:"poster_media_url"`
	PosterMediaKey *string `json:"poster_media_key"`
	Duration       *int64  `json:"duration"`
	AspectRatio    *string `json:"aspect_ratio"`
	Tweeted        bool    `json:"tweeted"`
	CreatedAt      string  `json:"created_at"`
	UpdatedAt      string  `json:"updated_at"`
	Deleted        bool    `json:"deleted"`
}

// render shows entry e.
func (m *Module) render(e storage.MediaLibraryEntry) libraryObject {
	media := e.Media
	o := libraryObject{MediaKey: e.MediaKey, Name: untitled, FileName: e.FileName, Title: e.Title,
		Description: e.Description, MediaType: mediaTypeOfKind[media.Kind], MediaCategory: strings.ToUpper(media.Category),
		MediaStatus: mediaStatus(media.State), MediaURL: m.url(media.Key, media.OutputKey), PosterMediaKey: e.PosterMediaKey,
		AspectRatio: aspectRatio(media), Tweeted: e.Tweeted, CreatedAt: adsx.Time(e.CreatedAt),
		UpdatedAt: adsx.Time(e.UpdatedAt), Deleted: e.Deleted}
	if e.Name != nil {
		o.Name = *e.Name
	}
	switch {
	case e.PosterOutputKey != "":
		o.PosterMediaURL = m.url(deref(e.PosterMediaKey), e.PosterOutputKey)
	case media.Kind != storage.MediaPhoto:
		o.PosterMediaURL = m.url(media.Key, media.PreviewKey)
	}
	if media.Kind == storage.MediaVideo {
		d := media.DurationMS
		o.Duration = &d
	}
	return o
}

// url is the public URL of blob key blobKey of media mediaKey, nil when
// either is empty or there are no MediaURLs.
func (m *Module) url(mediaKey, blobKey string) *string {
	u := m.deps.MediaURLs.Blob(mediaKey, blobKey)
	if u == "" {
		return nil
	}
	return &u
}

// mediaStatus is the media_status of an upload in state s.
func mediaStatus(s storage.MediaState) string {
	switch s {
	case storage.MediaSucceeded:
		return "TRANSCODE_COMPLETED"
	case storage.MediaFailed:
		return "TRANSCODE_FAILED"
	}
	return "TRANSCODING"
}

// aspectRatio is W:H reduced from the stored dimensions, else the stored
// ratio, else nil.
func aspectRatio(media storage.Media) *string {
	w, h := media.Width, media.Height
	if w > 0 && h > 0 {
		g := gcd(w, h)
		s := fmt.Sprintf("%d:%d", w/g, h/g)
		return &s
	}
	if media.AspectRatio != "" {
		s := media.AspectRatio
		return &s
	}
	return nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// deref is *s, "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
