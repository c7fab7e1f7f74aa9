package medialibrary

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// Error codes and field limits of the media library.
const (
	codeMediaNotFound = "MEDIA_NOT_FOUND"
	codeInvalidMedia  = "INVALID_MEDIA"

	maxMediaKey    = 64
	maxName        = 100
	maxFileName    = 255
	maxTitle       = 70
	maxDescription = 200
	maxQ           = 255
)

// fieldParams are the editable fields POST and PUT take.
var fieldParams = []string{"description", "file_name", "name", "poster_media_key", "title"}

// videoOnly are the fields only a video takes.
var videoOnly = []string{"description", "poster_media_key", "title"}

// libraryCategories are the upload categories the library takes.
var libraryCategories = []string{storage.MediaTweetImage, storage.MediaTweetGIF, storage.MediaTweetVideo, storage.MediaAmplifyVideo}

// libraryList pages the media library: 20 by default, at most 50, in the
// order of addition; no sort_by.
var libraryList = adsx.ListSpec{Listing: storage.ListingMediaLibrary, Default: storage.Sort{Field: "created_at"}, DefaultCount: 20, MaxCount: 50}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{libraryList} }

// list serves GET .../media_library.
func (m *Module) list(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	f := storage.MediaLibraryFilter{AccountID: acct.ID, Terms: queryTerms(p)}
	if t := p.Enum("media_type", mediaTypes); t != nil {
		f.Kind = kindOfMediaType(*t)
	}
	opts := m.deps.Kit.List(p, libraryList)
	if err := p.Err(); err != nil {
		return err
	}
	page, err := m.deps.Store.ListMediaLibrary(r.Context(), f, opts)
	if err != nil {
		return fmt.Errorf("list media library: %w", err)
	}
	return adsx.WriteList(w, m.deps.Kit, p, page, m.render)
}

// queryTerms splits q (1 to 255 characters) into the lower-case words an
// entry must all contain; a q without a letter or digit is invalid.
func queryTerms(p *adsx.Params) []string {
	q := p.String("q", maxQ)
	if q == nil {
		return nil
	}
	terms := strings.FieldsFunc(strings.ToLower(*q), func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) })
	if len(terms) == 0 {
		p.Fail("q", "q must contain a letter or a digit")
	}
	return terms
}

// get serves GET .../media_library/{media_key}.
func (m *Module) get(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	key := r.PathValue("media_key")
	e, err := m.deps.Store.MediaLibraryEntry(r.Context(), acct.ID, key)
	if err != nil {
		return entryError(key, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, m.render(e))
}

// add serves POST .../media_library: media_key must be a processed upload
// of the caller (owner or additional owner) in a library category; an
// entry already in the library is refused (a deleted one is added anew).
func (m *Module) add(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	key := p.Required("media_key", maxMediaKey)
	f := readFields(p)
	if err := p.Err(); err != nil {
		return err
	}
	media, err := m.usableMedia(r, "media_key", key)
	if err != nil {
		return err
	}
	if !slices.Contains(libraryCategories, media.Category) {
		return invalidMedia("media_key", key, fmt.Sprintf("media %s was uploaded with media_category %s, which the media library does not take", key, media.Category))
	}
	if err := m.checkFields(r, p, media.Kind, f); err != nil {
		return err
	}
	e, err := m.deps.Store.AddToMediaLibrary(r.Context(), acct.ID, key, f, media.Category == storage.MediaAmplifyVideo)
	if errors.Is(err, storage.ErrConflict) {
		return adsx.Invalid("media_key", fmt.Sprintf("media %s is already in the media library", key), key)
	}
	if err != nil {
		return fmt.Errorf("add media %s to the library: %w", key, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, m.render(e))
}

// update serves PUT .../media_library/{media_key}: the fields sent are set.
func (m *Module) update(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	f := readFields(p)
	if err := p.Err(); err != nil {
		return err
	}
	key := r.PathValue("media_key")
	e, err := m.deps.Store.MediaLibraryEntry(r.Context(), acct.ID, key)
	if err != nil {
		return entryError(key, err)
	}
	if err := m.checkFields(r, p, e.Media.Kind, f); err != nil {
		return err
	}
	e, err = m.deps.Store.UpdateMediaLibrary(r.Context(), acct.ID, key, f)
	if err != nil {
		return entryError(key, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, m.render(e))
}

// delete serves DELETE .../media_library/{media_key}: a soft delete that
// also deletes the PREROLL account media of an AMPLIFY_VIDEO.
func (m *Module) delete(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	key := r.PathValue("media_key")
	e, err := m.deps.Store.DeleteMediaLibrary(r.Context(), acct.ID, key)
	if err != nil {
		return entryError(key, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, m.render(e))
}

// readFields parses the editable fields.
func readFields(p *adsx.Params) storage.MediaLibraryFields {
	return storage.MediaLibraryFields{
		Name:           p.String("name", maxName),
		FileName:       p.String("file_name", maxFileName),
		Title:          p.String("title", maxTitle),
		Description:    p.String("description", maxDescription),
		PosterMediaKey: p.String("poster_media_key", maxMediaKey),
	}
}

// checkFields refuses the video-only fields on other kinds of media and
// checks the poster: a processed image upload of the caller.
func (m *Module) checkFields(r *http.Request, p *adsx.Params, kind string, f storage.MediaLibraryFields) error {
	if kind != storage.MediaVideo {
		for _, name := range videoOnly {
			if p.Has(name) {
				p.Fail(name, fmt.Sprintf("%s applies to videos only", name))
			}
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	if f.PosterMediaKey == nil {
		return nil
	}
	poster, err := m.usableMedia(r, "poster_media_key", *f.PosterMediaKey)
	if err != nil {
		return err
	}
	if poster.Kind != storage.MediaPhoto {
		return invalidMedia("poster_media_key", poster.Key, fmt.Sprintf("poster %s is not an image", poster.Key))
	}
	return nil
}

// usableMedia loads upload key named by param: it must be the caller's
// (404 MEDIA_NOT_FOUND, whether missing or another user's) and processed
// (400 INVALID_MEDIA).
func (m *Module) usableMedia(r *http.Request, param, key string) (storage.Media, error) {
	media, err := m.deps.Store.MediaByKey(r.Context(), key)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && !media.UsableBy(adsx.UserID(r))) {
		return storage.Media{}, adsx.NotFound(codeMediaNotFound, param, key)
	}
	if err != nil {
		return storage.Media{}, fmt.Errorf("load media %s: %w", key, err)
	}
	if media.State != storage.MediaSucceeded {
		return storage.Media{}, invalidMedia(param, key, fmt.Sprintf("media %s has not been processed successfully (state %s)", key, media.State))
	}
	return media, nil
}

// invalidMedia is the 400 INVALID_MEDIA of an upload the request cannot use.
func invalidMedia(param, key, message string) *apierr.Error {
	return &apierr.Error{Status: http.StatusBadRequest, Title: "Invalid media", Detail: message, AdsCode: codeInvalidMedia,
		Params: []apierr.ParamError{apierr.Param(param, message, key)}}
}

// entryError turns a store miss into MEDIA_NOT_FOUND.
func entryError(key string, err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		return adsx.NotFound(codeMediaNotFound, "media_key", key)
	}
	return fmt.Errorf("media library entry %s: %w", key, err)
}
