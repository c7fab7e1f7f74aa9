package social

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// targetRequest is the body of the follow, mute and block endpoints.
type targetRequest struct {
	TargetUserID string `json:"target_user_id" validate:"required,coreid"`
}

type followData struct {
	Following     bool `json:"following"`
	PendingFollow bool `json:"pending_follow"`
}

type unfollowData struct {
	Following bool `json:"following"`
}

type muteData struct {
	Muting bool `json:"muting"`
}

type blockData struct {
	Blocking bool `json:"blocking"`
}

type answer[T any] struct {
	Data T `json:"data"`
}

// change reads the acting user and the body's target, refuses oneself as
// the target (verb names the action), and runs act.
func (m *Module) change(w http.ResponseWriter, r *http.Request, verb string, act func(source, target int64) (any, error)) error {
	source, err := httpx.ActingUser(r, "id")
	if err != nil {
		return err
	}
	var req targetRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	target, _ := validation.ParseID(req.TargetUserID)
	if target == source {
		return apierr.InvalidParam("target_user_id", fmt.Sprintf("You can not %s yourself: the `target_user_id` field names the authenticated user [%s].", verb, req.TargetUserID), req.TargetUserID)
	}
	body, err := act(source, target)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return httpx.Refuse("target_user_id", validation.Unseen("user", req.TargetUserID))
	case errors.Is(err, storage.ErrBlocked):
		return apierr.NotAuthorizedForResource("user", req.TargetUserID, fmt.Sprintf("You can not follow the user [%s]: one of you blocks the other.", req.TargetUserID))
	case err != nil:
		return fmt.Errorf("%s user %d for user %d: %w", verb, target, source, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, body)
}

// undo reads source_user_id (the caller) and target_user_id from the path
// and runs act; undoing what was not done answers the same.
func (m *Module) undo(w http.ResponseWriter, r *http.Request, verb string, act func(source, target int64) error, body any) error {
	source, err := httpx.ActingUser(r, "source_user_id")
	if err != nil {
		return err
	}
	target, err := httpx.PathID(r, "target_user_id")
	if err != nil {
		return err
	}
	if err := act(source, target); err != nil {
		return fmt.Errorf("%s user %d for user %d: %w", verb, target, source, err)
	}
	return httpx.WriteJSON(w, http.StatusOK, body)
}

func (m *Module) follow(w http.ResponseWriter, r *http.Request) error {
	return m.change(w, r, "follow", func(source, target int64) (any, error) {
		st, err := m.Store.Follow(r.Context(), httpx.Principal(r).App.ID, source, target)
		return answer[followData]{followData{Following: st.Following, PendingFollow: st.Pending}}, err
	})
}

func (m *Module) unfollow(w http.ResponseWriter, r *http.Request) error {
	return m.undo(w, r, "unfollow", func(source, target int64) error {
		_, err := m.Store.Unfollow(r.Context(), httpx.Principal(r).App.ID, source, target)
		return err
	}, answer[unfollowData]{unfollowData{Following: false}})
}

func (m *Module) mute(w http.ResponseWriter, r *http.Request) error {
	return m.change(w, r, "mute", func(source, target int64) (any, error) {
		_, err := m.Store.Mute(r.Context(), httpx.Principal(r).App.ID, source, target)
		return answer[muteData]{muteData{Muting: true}}, err
	})
}

func (m *Module) unmute(w http.ResponseWriter, r *http.Request) error {
	return m.undo(w, r, "unmute", func(source, target int64) error {
		_, err := m.Store.Unmute(r.Context(), httpx.Principal(r).App.ID, source, target)
		return err
	}, answer[muteData]{muteData{Muting: false}})
}

func (m *Module) block(w http.ResponseWriter, r *http.Request) error {
	return m.change(w, r, "block", func(source, target int64) (any, error) {
		_, err := m.Store.Block(r.Context(), httpx.Principal(r).App.ID, source, target)
		return answer[blockData]{blockData{Blocking: true}}, err
	})
}

func (m *Module) unblock(w http.ResponseWriter, r *http.Request) error {
	return m.undo(w, r, "unblock", func(source, target int64) error {
		_, err := m.Store.Unblock(r.Context(), httpx.Principal(r).App.ID, source, target)
		return err
	}, answer[blockData]{blockData{Blocking: false}})
}
