package console

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/aviary-dev/aviary/storage"
)

// OpenBlob reads the object key of the blob store and its size (-1:
// unknown); a missing object is storage.ErrNotFound (cmd adapts
// storage/blob, which web does not import). The caller closes it.
type OpenBlob func(ctx context.Context, key string) (io.ReadCloser, int64, error)

// mediaListSize is how many uploads the media page shows.
const mediaListSize = 100

// mediaData is the media page's and its "uploads" fragment's.
type mediaData struct {
	Base
	Uploads []mediaRow
	Polling bool // an upload is pending or in progress: the fragment polls again in 2 s
}

type mediaRow struct {
	storage.Media
	AppName string
	// Image: a picture to show (/preview); Video: a player of /video,
	// with Poster its /preview frame.
	Image, Video, Poster bool
}

// processing reports whether a worker still has to settle m: the states
// the page polls for (an upload still receiving segments waits for its
// client, not for Aviary).
func processing(m storage.Media) bool {
	return m.State == storage.MediaPending || m.State == storage.MediaInProgress
}

func (s *Server) mediaPage(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderMedia(w, r, v, "")
}

// mediaUploads is the table alone, which the page's htmx polls every 2 s
// while an upload is processing.
func (s *Server) mediaUploads(w http.ResponseWriter, r *http.Request, v viewer) {
	s.renderMedia(w, r, v, "uploads")
}

func (s *Server) renderMedia(w http.ResponseWriter, r *http.Request, v viewer, fragment string) {
	names, err := s.appNames(r.Context(), v)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	list, err := s.store.ConsoleMedia(r.Context(), keys(names), v.Admin, mediaListSize)
	if err != nil {
		s.kit.Fail(w, r, err)
		return
	}
	d := mediaData{Base: s.base(&v, "Media", "media")}
	for _, m := range list {
		row := mediaRow{Media: m, AppName: appName(names, m.AppID)}
		if m.State == storage.MediaSucceeded && s.cfg.OpenBlob != nil {
			_, picture := previewOf(m)
			_, row.Video = videoOf(m)
			row.Poster = row.Video && picture
			row.Image = picture && !row.Video // a video without its file: its poster frame
		}
		d.Uploads = append(d.Uploads, row)
		d.Polling = d.Polling || processing(m)
	}
	s.render(w, r, http.StatusOK, "media", fragment, d)
}

// previewOf is the picture of m the page shows: a photo's processed copy,
// or a video's or GIF's poster frame.
func previewOf(m storage.Media) (blobRef, bool) {
	switch {
	case m.Kind == storage.MediaPhoto && m.OutputKey != "" && strings.HasPrefix(m.OutputType, "image/"):
		return blobRef{key: m.OutputKey, contentType: m.OutputType}, true
	case (m.Kind == storage.MediaVideo || m.Kind == storage.MediaAnimatedGIF) && m.PreviewKey != "":
		return blobRef{key: m.PreviewKey, contentType: "image/jpeg"}, true
	}
	return blobRef{}, false
}

// videoOf is the processed video of a video or GIF.
func videoOf(m storage.Media) (blobRef, bool) {
	if (m.Kind == storage.MediaVideo || m.Kind == storage.MediaAnimatedGIF) && m.OutputKey != "" && strings.HasPrefix(m.OutputType, "video/") {
		return blobRef{key: m.OutputKey, contentType: m.OutputType}, true
	}
	return blobRef{}, false
}

// blobRef is a media object and the content type it is served with (the
// record's, never one the store or the uploader claims).
type blobRef struct {
	key, contentType string
}

// mediaPreview streams the picture of the path's {media}.
func (s *Server) mediaPreview(w http.ResponseWriter, r *http.Request, v viewer) {
	s.serveMedia(w, r, v, previewOf)
}

// mediaVideo streams the processed video of the path's {media}.
func (s *Server) mediaVideo(w http.ResponseWriter, r *http.Request, v viewer) {
	s.serveMedia(w, r, v, videoOf)
}

// serveMedia streams the object pick chooses of a succeeded upload of one
// of the viewer's apps (any for an administrator) from the blob store,
// through the console: no storage URL reaches the page.
func (s *Server) serveMedia(w http.ResponseWriter, r *http.Request, v viewer, pick func(storage.Media) (blobRef, bool)) {
	m, ok := s.visibleMedia(w, r, v)
	if !ok {
		return
	}
	ref, ok := pick(m)
	if !ok || m.State != storage.MediaSucceeded || s.cfg.OpenBlob == nil {
		s.notFound(w, r, v)
		return
	}
	body, size, err := s.cfg.OpenBlob(r.Context(), ref.key)
	if !s.found(w, r, v, err) {
		return
	}
	defer body.Close()
	h := w.Header()
	h.Set("Content-Type", ref.contentType)
	h.Set("Content-Disposition", "inline")
	h.Set("Cache-Control", "private, no-store")
	if size >= 0 {
		h.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	if _, err := io.Copy(w, body); err != nil && r.Context().Err() == nil {
		s.log.WarnContext(r.Context(), "console: stream media", "media_id", m.ID, "error", err)
	}
}

// visibleMedia loads the path's {media} if it is an upload of one of the
// viewer's apps, or any for an administrator; else 404.
func (s *Server) visibleMedia(w http.ResponseWriter, r *http.Request, v viewer) (storage.Media, bool) {
	id, err := strconv.ParseInt(r.PathValue("media"), 10, 64)
	if err != nil || id <= 0 {
		s.notFound(w, r, v)
		return storage.Media{}, false
	}
	m, err := s.store.Media(r.Context(), id)
	if !s.found(w, r, v, err) {
		return m, false
	}
	if v.Admin {
		return m, true
	}
	owner := int64(0)
	if m.AppID != 0 {
		if owner, err = s.store.AppOwner(r.Context(), m.AppID); err != nil {
			s.kit.Fail(w, r, err)
			return m, false
		}
	}
	if owner != v.User.ID {
		s.notFound(w, r, v)
		return m, false
	}
	return m, true
}

// keys are the ids of names.
func keys(names map[int64]string) []int64 {
	out := make([]int64, 0, len(names))
	for id := range names {
		out = append(out, id)
	}
	return out
}

// appName names app id for a list: its name, "app <id>" for an app the
// console does not list (an administrator's view), "no app" for 0.
func appName(names map[int64]string, id int64) string {
	if n, ok := names[id]; ok {
		return n
	}
	if id == 0 {
		return "no app"
	}
	return "app " + strconv.FormatInt(id, 10)
}
