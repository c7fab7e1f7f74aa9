package posts

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// engageRequest is the body of POST /2/users/{id}/likes and /retweets.
type engageRequest struct {
	TweetID string `json:"tweet_id" validate:"required,coreid"`
}

// target reads the body's tweet_id: a post the caller can see, not a repost.
func (m *Module) target(r *http.Request, user int64) (storage.Post, error) {
	var req engageRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return storage.Post{}, err
	}
	return m.livePost(r.Context(), "tweet_id", req.TweetID, user)
}

// engage runs act for the acting user on the body's post and answers
// with what act returns.
func (m *Module) engage(w http.ResponseWriter, r *http.Request, what string, act func(user int64, post storage.Post) (any, error)) error {
	user, err := httpx.ActingUser(r, "id")
	if err != nil {
		return err
	}
	post, err := m.target(r, user)
	if err != nil {
		return err
	}
	body, err := act(user, post)
	if err != nil {
		return m.engageError(what, post.ID, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, body)
}

// disengage runs undo for the acting user on the post named by the path
// value param and answers with body.
func (m *Module) disengage(w http.ResponseWriter, r *http.Request, what, param string, undo func(user, post int64) (bool, error), body any) error {
	user, err := httpx.ActingUser(r, "id")
	if err != nil {
		return err
	}
	post, err := httpx.PathID(r, param)
	if err != nil {
		return err
	}
	if _, err := undo(user, post); err != nil {
		return fmt.Errorf("%s post %d: %w", what, post, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, body)
}

func (m *Module) like(w http.ResponseWriter, r *http.Request) error {
	return m.engage(w, r, "like", func(user int64, post storage.Post) (any, error) {
		_, err := m.Store.LikeWith(r.Context(), httpx.Principal(r).App.ID, user, post.ID)
		return likeResponse{Data: liked{Liked: true}}, err
	})
}

func (m *Module) unlike(w http.ResponseWriter, r *http.Request) error {
	return m.disengage(w, r, "unlike", "tweet_id", func(user, post int64) (bool, error) {
		return m.Store.Unlike(r.Context(), user, post)
	}, likeResponse{Data: liked{Liked: false}})
}

func (m *Module) repost(w http.ResponseWriter, r *http.Request) error {
	app := httpx.Principal(r).App.ID
	return m.engage(w, r, "repost", func(user int64, post storage.Post) (any, error) {
		created, err := m.Store.Repost(r.Context(), user, app, post.ID)
		return repostResponse{Data: reposted{Retweeted: true, RestID: httpx.FormatID(created.ID)}}, err
	})
}

func (m *Module) unrepost(w http.ResponseWriter, r *http.Request) error {
	return m.disengage(w, r, "undo repost of", "source_tweet_id", func(user, post int64) (bool, error) {
		return m.Store.Unrepost(r.Context(), user, post)
	}, repostResponse{Data: reposted{Retweeted: false}})
}

// engageError maps a like or repost failure: the post deleted meanwhile
// is the same invalid-request as an unknown one.
func (m *Module) engageError(what string, id int64, err error) error {
	if errors.Is(err, storage.ErrNotFound) {
		raw := httpx.FormatID(id)
		return httpx.Refuse("tweet_id", validation.Unseen("post", raw))
	}
	return fmt.Errorf("%s post %d: %w", what, id, err)
}
