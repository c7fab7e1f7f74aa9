package api

import (
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// maxPostChars is the post length limit (weighted counting comes with the
// posts issue; until then every character counts as one).
const maxPostChars = 280

type createPostRequest struct {
	Text            *string `json:"text"`
	PaidPartnership bool    `json:"paid_partnership,omitempty"`
}

func (s *Server) createPost(w http.ResponseWriter, r *http.Request) error {
	var req createPostRequest
	if err := s.decodeJSON(w, r, &req); err != nil {
		return err
	}
	if req.Text == nil || *req.Text == "" {
		return apierr.InvalidParam("text", "The `text` field is required and can not be empty.")
	}
	if n := utf8.RuneCountInString(*req.Text); n > maxPostChars {
		return apierr.InvalidParam("text", fmt.Sprintf("The `text` field is %d characters long; the limit is %d.", n, maxPostChars))
	}
	p := mustPrincipal(r)
	post, err := s.Store.CreatePost(r.Context(), storage.Post{AuthorID: p.User.ID, AppID: p.App.ID, Text: *req.Text, PaidPartnership: req.PaidPartnership})
	if err != nil {
		return fmt.Errorf("create post: %w", err)
	}
	return writeJSON(w, http.StatusCreated, map[string]any{"data": map[string]any{"id": ids.Format(post.ID), "text": post.Text}})
}

func (s *Server) deletePost(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r)
	if err != nil {
		return err
	}
	user := mustPrincipal(r).User
	post, err := s.Store.PostByID(r.Context(), id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && post.DeletedAt != nil) {
		return apierr.NotFound("tweet", "id", ids.Format(id))
	}
	if err != nil {
		return fmt.Errorf("load post %d: %w", id, err)
	}
	if post.AuthorID != user.ID {
		return apierr.NotAuthorizedForResource("tweet", ids.Format(id), "You are not allowed to delete a Post you did not author.")
	}
	_, err = s.Store.DeletePost(r.Context(), id, s.now())
	if errors.Is(err, storage.ErrNotFound) {
		return apierr.NotFound("tweet", "id", ids.Format(id)) // deleted concurrently
	}
	if err != nil {
		return fmt.Errorf("delete post %d: %w", id, err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"deleted": true}})
}
