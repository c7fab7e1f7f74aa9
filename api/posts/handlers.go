package posts

import (
	"errors"
	"fmt"
	"net/http"
	"unicode"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

// maxPostChars is the post length limit (weighted counting comes with the
// posts issue; until then every character counts as one).
const maxPostChars = 280

type createRequest struct {
	Text            *string       `json:"text"`
	PaidPartnership bool          `json:"paid_partnership,omitempty"`
	Media           *mediaRequest `json:"media,omitempty"`
}

func (m *Module) create(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	if err := checkText(req); err != nil {
		return err
	}
	p := httpx.Principal(r)
	mediaIDs, err := m.attachments(r.Context(), p.User.ID, req.Media, m.Clock().UTC())
	if err != nil {
		return err
	}
	text := ""
	if req.Text != nil {
		text = *req.Text
	}
	post, err := m.Store.CreatePost(r.Context(), storage.Post{AuthorID: p.User.ID, AppID: p.App.ID, Text: text,
		PaidPartnership: req.PaidPartnership, MediaIDs: mediaIDs})
	if err != nil {
		return fmt.Errorf("create post: %w", err)
	}
	return httpx.WriteJSON(w, http.StatusCreated, createResponse{Data: createdPost{ID: httpx.FormatID(post.ID), Text: post.Text}})
}

// checkText checks the post's text: required unless the post carries media
// (as on the platform), and when given, visible and within maxPostChars.
func checkText(req createRequest) error {
	if req.Text == nil || *req.Text == "" {
		if req.Media != nil {
			return nil
		}
		return apierr.InvalidParam("text", "The `text` field is required and can not be empty.")
	}
	if blank(*req.Text) {
		return apierr.InvalidParam("text", "The `text` field must contain at least one visible character, not only whitespace.", *req.Text)
	}
	if n := utf8.RuneCountInString(*req.Text); n > maxPostChars {
		return apierr.InvalidParam("text", fmt.Sprintf("The `text` field is %d characters long; the limit is %d.", n, maxPostChars))
	}
	return nil
}

// blank reports whether text shows nothing: only whitespace (any Unicode
// space, such as U+00A0 or U+3000) and invisible format characters (such as
// U+200B ZERO WIDTH SPACE or U+FEFF). The body decoder has already refused
// invalid UTF-8 and unpaired surrogates.
func blank(text string) bool {
	for _, r := range text {
		if !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

func (m *Module) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	user := httpx.Principal(r).User
	post, err := m.Store.PostByID(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && post.DeletedAt != nil) {
		return apierr.NotFound("tweet", "id", httpx.FormatID(id))
	}
	if err != nil {
		return fmt.Errorf("load post %d: %w", id, err)
	}
	if post.AuthorID != user.ID {
		return apierr.NotAuthorizedForResource("tweet", httpx.FormatID(id), "You are not allowed to delete a Post you did not author.")
	}
	_, err = m.Store.DeletePost(r.Context(), id, m.Clock().UTC())
	if errors.Is(err, storage.ErrNotFound) {
		return apierr.NotFound("tweet", "id", httpx.FormatID(id)) // deleted concurrently
	}
	if err != nil {
		return fmt.Errorf("delete post %d: %w", id, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, deleteResponse{Data: deleted{Deleted: true}})
}
