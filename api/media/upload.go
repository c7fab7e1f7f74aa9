package media

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// The one-shot upload, POST /2/media/upload (OpenAPI operation
// mediaUpload, docs/media-upload.md): the media of one request (base64
// `media` in JSON, raw bytes in a multipart form) plus `media_category`
// and optional `additional_owners` (comma-separated user ids). It is
// initialize, one append and finalize in one request: the same records,
// limits, processing and answer. The request carries no media_type: it
// is recognised from the bytes.

// maxFormField caps media_category and additional_owners in a form.
const maxFormField = 4 << 10

type uploadRequest struct {
	Media         string `json:"media" validate:"required"`
	MediaCategory string `json:"media_category" validate:"required,enum=media_category"`
	// AdditionalOwners, a comma list, is checked by ownersProblem and
	// checkOwners.
	AdditionalOwners string `json:"additional_owners,omitempty"`
}

// upload serves POST /2/media/upload.
func (m *Module) upload(w http.ResponseWriter, r *http.Request) error {
	if r.ContentLength > appendMaxBody {
		return apierr.PayloadTooLarge(appendMaxBody)
	}
	req, data, err := m.readUpload(r)
	if err != nil {
		return err
	}
	mediaType, err := recognise(data, req.MediaCategory)
	if err != nil {
		return err
	}
	user := httpx.Principal(r).User
	raw := splitOwners(req.AdditionalOwners)
	if p := ownersProblem(raw); p != nil {
		return httpx.Refuse("additional_owners", p)
	}
	owners, err := m.checkOwners(r.Context(), raw, user.ID)
	if err != nil {
		return err
	}
	if err := m.checkSize(r.Context(), user.ID, req.MediaCategory, int64(len(data))); err != nil {
		return err
	}
	if len(data) > storage.MediaMaxSegment {
		return httpx.Refuse("media", validation.Problemf(nil, "The `%[1]s` field is larger than %[2]d bytes (5 MiB), the most a one-shot upload takes; upload it in chunks (POST /2/media/upload/initialize).",
			storage.MediaMaxSegment))
	}
	media, err := m.create(r, initializeRequest{MediaType: mediaType, TotalBytes: int64(len(data))}, req.MediaCategory, owners)
	if err != nil {
		return err
	}
	if media, err = m.storeWhole(r, media, data); err != nil {
		return err
	}
	m.Logger.InfoContext(r.Context(), "media uploaded in one request", "media_id", media.ID, "user_id", user.ID,
		"category", media.Category, "media_type", mediaType, "bytes", media.TotalBytes)
	return m.answerFinalized(w, r, media)
}

// storeWhole stores data as segment 0 of media, just created, and
// finalizes it.
func (m *Module) storeWhole(r *http.Request, media storage.Media, data []byte) (storage.Media, error) {
	key, err := segmentKey(media.ID)
	if err != nil {
		return media, err
	}
	if err := m.Blobs.Put(r.Context(), key, bytes.NewReader(data), int64(len(data)), segmentContentType); err != nil {
		m.discard(r.Context(), key)
		return media, fmt.Errorf("store media %d: %w", media.ID, err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), recordTimeout)
	defer cancel()
	if _, err := m.record(ctx, media, segment{index: 0, key: key, size: int64(len(data))}); err != nil {
		m.discard(ctx, key)
		return media, err
	}
	finalized, err := m.Store.FinalizeMedia(ctx, media.ID, m.Clock().UTC())
	if err != nil {
		return media, fmt.Errorf("finalize media %d: %w", media.ID, err)
	}
	return finalized, nil
}

// readUpload reads a JSON or multipart one-shot request.
func (m *Module) readUpload(r *http.Request) (uploadRequest, []byte, error) {
	var req uploadRequest
	if httpx.BodyType(r) == httpx.ContentMultipart {
		return m.readUploadForm(r)
	}
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return req, nil, err
	}
	data, err := base64.StdEncoding.DecodeString(req.Media)
	if err != nil {
		return req, nil, apierr.InvalidParam("media", fmt.Sprintf("The `media` field is not valid base64 (standard alphabet, padded): %v.", err))
	}
	return req, data, nil
}

// readUploadForm reads a multipart one-shot request: a `media` part
// (file or field, raw bytes), `media_category` and `additional_owners`.
func (m *Module) readUploadForm(r *http.Request) (uploadRequest, []byte, error) {
	var req uploadRequest
	mr, err := multipartReader(r)
	if err != nil {
		return req, nil, apierr.InvalidParam("body", fmt.Sprintf("The request body is not a valid multipart form: %v.", err))
	}
	var data []byte
	seen := map[string]bool{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return req, nil, httpx.BodyReadError(r.Context(), err)
		}
		name := part.FormName()
		if seen[name] {
			return req, nil, apierr.InvalidParam(name, fmt.Sprintf("The `%s` field may be given only once.", name))
		}
		seen[name] = true
		value, err := readField(r.Context(), part, name)
		part.Close()
		if err != nil {
			return req, nil, err
		}
		switch name {
		case "media":
			data = value
		case "media_category":
			req.MediaCategory = string(value)
		case "additional_owners":
			req.AdditionalOwners = string(value)
		}
	}
	switch {
	case data == nil:
		return req, nil, apierr.InvalidParam("media", "The `media` field is required: the bytes of the media, as a file part or a field.")
	case req.MediaCategory == "":
		return req, nil, apierr.InvalidParam("media_category", "The `media_category` field is required.")
	case !slices.Contains(storage.MediaCategories, req.MediaCategory):
		return req, nil, apierr.InvalidParam("media_category", fmt.Sprintf("The `media_category` field value [%.64s] is not one of [%s].",
			req.MediaCategory, strings.Join(storage.MediaCategories, ",")), req.MediaCategory)
	}
	return req, data, nil
}

// readField reads one part of a one-shot form, within its cap.
func readField(ctx context.Context, part *multipart.Part, name string) ([]byte, error) {
	limit := int64(maxFormField)
	switch name {
	case "media":
		limit = storage.MediaMaxSegment
	case "media_category", "additional_owners":
	case "":
		return nil, apierr.InvalidParam("body", "Every part of the multipart body must be a form field with a name (`media`, `media_category`, `additional_owners`).")
	default:
		return nil, apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is not a valid field for this request.", name))
	}
	value, err := io.ReadAll(io.LimitReader(part, limit+1))
	if err != nil {
		return nil, httpx.BodyReadError(ctx, err)
	}
	if int64(len(value)) > limit {
		return nil, apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is larger than %d bytes.", name, limit))
	}
	return value, nil
}

// splitOwners splits the comma-separated additional_owners.
func splitOwners(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// recognise is the media_type of data, which must be one category takes:
// the platform's one-shot upload names no type.
func recognise(data []byte, category string) (string, error) {
	if len(data) == 0 {
		return "", httpx.Refuse("media", validation.Problemf(nil, "The `%[1]s` field is empty."))
	}
	mediaType := sniff(data, category)
	accepted := storage.MediaTypesOf(category)
	if !slices.Contains(accepted, mediaType) {
		what := "of a type Aviary does not recognise"
		if mediaType != "" {
			what = mediaType
		}
		return "", httpx.Refuse("media", validation.Problemf(nil, "The `%[1]s` field is %[2]s, not a type the media category %[3]s takes: [%[4]s].",
			what, category, strings.Join(accepted, ",")))
	}
	return mediaType, nil
}

// sniff recognises the formats the platform accepts from their first
// bytes ("" when none fits).
func sniff(data []byte, category string) string {
	if category == storage.MediaSubtitles {
		if bytes.HasPrefix(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), []byte("WEBVTT")) {
			return "text/vtt"
		}
		return "text/srt"
	}
	switch {
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return "image/tiff"
	case len(data) >= 12 && string(data[4:8]) == "ftyp" && string(data[8:12]) == "qt  ":
		return "video/quicktime"
	case len(data) > 188 && data[0] == 0x47 && data[188] == 0x47:
		return "video/mp2t"
	}
	switch t, _, _ := strings.Cut(http.DetectContentType(data), ";"); t {
	case "image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp", "video/mp4", "video/webm":
		return t
	}
	if len(data) >= 8 && string(data[4:8]) == "ftyp" {
		return "video/mp4"
	}
	return ""
}
