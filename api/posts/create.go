package posts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	postops "github.com/aviary-dev/aviary/ops/posts"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/validation"
)

// createRequest is POST /2/tweets' body (docs/posts.md).
// The rules (rules.go) check everything that needs neither the store nor
// the caller; create checks the rest.
type createRequest struct {
	Text            *string       `json:"text" validate:"post_text"`
	PaidPartnership bool          `json:"paid_partnership,omitempty"`
	Media           *mediaRequest `json:"media,omitempty"`
	Reply           *replyRequest `json:"reply,omitempty"`
	QuoteTweetID    *string       `json:"quote_tweet_id,omitempty" validate:"coreid"`
	EditOptions     *editRequest  `json:"edit_options,omitempty"`
	Geo             *geoRequest   `json:"geo,omitempty"`
}

type replyRequest struct {
	InReplyToTweetID    string   `json:"in_reply_to_tweet_id" validate:"coreid"`
	ExcludeReplyUserIDs []string `json:"exclude_reply_user_ids,omitempty" validate:"coreids"`
}

type editRequest struct {
	PreviousPostID string `json:"previous_post_id" validate:"post_edit_alone,coreid"`
}

type geoRequest struct {
	PlaceID string `json:"place_id" validate:"length=1-64"`
}

// maxCashtagsSelfServe is how many cashtags a self-serve app's post may
// carry (the platform's post creation restrictions).
const maxCashtagsSelfServe = 1

func (m *Module) create(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	p := httpx.Principal(r)
	now := m.Clock().UTC()
	draft, err := m.draft(r.Context(), p, req, now)
	if err != nil {
		return err
	}
	var post storage.Post
	if req.EditOptions != nil {
		post, err = m.edit(r.Context(), p, req.EditOptions.PreviousPostID, draft, now)
	} else {
		post, err = postops.Create(r.Context(), m.Store, draft)
		if errors.Is(err, storage.ErrNotFound) { // the parent or quoted post went away meanwhile
			return httpx.Refuse("reply.in_reply_to_tweet_id", validation.Problemf(nil, "The post you reply to or quote was deleted."))
		}
	}
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusCreated, createResponse{Data: createdPost{ID: httpx.FormatID(post.ID), Text: post.Text,
		EditHistoryTweetIDs: formatIDs(post.EditHistory, post.ID)}})
}

// draft builds the post req describes: checks its references and media,
// extracts its entities and detects its language.
func (m *Module) draft(ctx context.Context, p auth.Principal, req createRequest, now time.Time) (storage.Post, error) {
	text := ""
	if req.Text != nil {
		text = *req.Text
	}
	post := postops.Compose(p.User.ID, p.App.ID, p.App.Name, text)
	post.PaidPartnership = req.PaidPartnership
	if len(post.Entities.Cashtags) > maxCashtagsSelfServe && p.App.Tier != storage.TierEnterprise {
		return storage.Post{}, httpx.Refuse("text", validation.Problemf(nil, "Posts made by self-serve apps may carry at most %[2]d cashtag; this one has %[3]d.",
			maxCashtagsSelfServe, len(post.Entities.Cashtags)))
	}
	if err := postops.ResolveMentions(ctx, m.Store, &post.Entities); err != nil {
		return storage.Post{}, err
	}
	if req.Geo != nil {
		post.PlaceID = req.Geo.PlaceID
	}
	mediaIDs, err := m.attachments(ctx, p.User.ID, req.Media, now)
	if err != nil {
		return storage.Post{}, err
	}
	post.MediaIDs = mediaIDs
	if err := m.references(ctx, p, req, &post); err != nil {
		return storage.Post{}, err
	}
	return post, nil
}

// references checks the reply and quote of req and records them on post.
func (m *Module) references(ctx context.Context, p auth.Principal, req createRequest, post *storage.Post) error {
	if req.QuoteTweetID != nil {
		quoted, err := m.livePost(ctx, "quote_tweet_id", *req.QuoteTweetID, p.User.ID)
		if err != nil {
			return err
		}
		if p.App.Tier != storage.TierEnterprise {
			return apierr.Forbidden("Quoting a post (quote_tweet_id) requires an enterprise app; self-serve apps can not quote posts.")
		}
		post.QuoteOfID = quoted.ID
	}
	if req.Reply == nil {
		return nil
	}
	parent, err := m.livePost(ctx, "reply.in_reply_to_tweet_id", req.Reply.InReplyToTweetID, p.User.ID)
	if err != nil {
		return err
	}
	if err := m.mayReply(ctx, p, parent); err != nil {
		return err
	}
	post.InReplyToPostID, post.InReplyToUserID = parent.ID, parent.AuthorID
	return nil
}

// livePost loads the post named by raw (a core id: the coreid rule checked
// it) in field param, which viewer must be able to see: unknown, deleted
// or hidden ids are invalid-request naming the field.
func (m *Module) livePost(ctx context.Context, param, raw string, viewer int64) (storage.Post, error) {
	id, _ := validation.ParseID(raw)
	post, author, err := m.postWithAuthor(ctx, id)
	if err != nil {
		return storage.Post{}, err
	}
	if post.ID == 0 || render.PostVisibility(post, author, render.Viewer(viewer)) != render.Visible || post.IsRepost() {
		return storage.Post{}, httpx.Refuse(param, validation.Unseen("post", raw))
	}
	return post, nil
}

// mayReply applies the platform's reply restriction: a self-serve app may
// reply for a user only to that user's own posts or where the original
// author summoned the user by a mention or by quoting one of their posts.
func (m *Module) mayReply(ctx context.Context, p auth.Principal, parent storage.Post) error {
	if p.App.Tier == storage.TierEnterprise || parent.AuthorID == p.User.ID {
		return nil
	}
	for _, mn := range parent.Entities.Mentions {
		if mn.UserID == p.User.ID || strings.EqualFold(mn.Username, p.User.Username) {
			return nil
		}
	}
	if parent.QuoteOfID != 0 {
		quoted, err := m.Store.PostByID(ctx, parent.QuoteOfID)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("load quoted post %d: %w", parent.QuoteOfID, err)
		}
		if err == nil && quoted.AuthorID == p.User.ID {
			return nil
		}
	}
	return apierr.NotAuthorizedForResource("tweet", ids.Format(parent.ID),
		"You can reply to this post only if its author mentioned you or quoted one of your posts: programmatic replies of self-serve apps must be summoned by the original author.")
}

// edit stores draft as the next version of the caller's post previousRaw.
func (m *Module) edit(ctx context.Context, p auth.Principal, previousRaw string, draft storage.Post, now time.Time) (storage.Post, error) {
	const param = "edit_options.previous_post_id"
	previous, err := m.livePost(ctx, param, previousRaw, p.User.ID)
	if err != nil {
		return storage.Post{}, err
	}
	if err := m.mayEdit(ctx, p, previous, draft, now); err != nil {
		return storage.Post{}, err
	}
	post, err := postops.Edit(ctx, m.Store, previous.ID, draft, now)
	var refusal storage.EditRefusal
	if errors.As(err, &refusal) { // the chain changed since mayEdit looked
		return storage.Post{}, httpx.Refuse(param, editRefused(previousRaw, string(refusal)))
	}
	return post, err
}

// mayEdit applies the edit rules (spec "Limits: Post edit"): the author's
// own latest version, within storage.EditWindow of the first version,
// fewer than storage.MaxEdits edits, a premium author; replies to others
// are not editable, and an edit keeps the post's references.
func (m *Module) mayEdit(ctx context.Context, p auth.Principal, previous, draft storage.Post, now time.Time) error {
	const param = "edit_options.previous_post_id"
	id := ids.Format(previous.ID)
	refuse := func(why string) error { return httpx.Refuse(param, editRefused(id, why)) }
	if previous.AuthorID != p.User.ID {
		return apierr.NotAuthorizedForResource("tweet", id, "You can edit only your own posts.")
	}
	if !p.User.Premium {
		return apierr.Forbidden("Editing posts is available to premium users only.")
	}
	history := previous.EditHistory
	if len(history) == 0 {
		history = []int64{previous.ID}
	}
	switch {
	case previous.SupersededAt != nil || history[len(history)-1] != previous.ID:
		return refuse(fmt.Sprintf("it is not the latest version; edit [%s]", ids.Format(history[len(history)-1])))
	case previous.InReplyToUserID != 0 && previous.InReplyToUserID != p.User.ID:
		return refuse("replies to other users' posts are not editable")
	case len(history)-1 >= storage.MaxEdits:
		return refuse(fmt.Sprintf("it was edited %d times, the most allowed", storage.MaxEdits))
	case !now.Before(render.EditableUntil(previous)):
		return refuse(fmt.Sprintf("the edit window of %s after the first version closed", storage.EditWindow))
	}
	return nil
}

// editRefused is the problem of an edit the post id can not take.
func editRefused(id, why string) *validation.Problem {
	return validation.Problemf([]string{id}, "The post [%[2]s] can not be edited: %[3]s.", id, why)
}
