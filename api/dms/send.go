package dms

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// maxText is the longest message, in characters (the platform's DM
// limit); maxAttachments the number of media a message carries (one, as
// on the platform).
const (
	maxText        = 10000
	maxAttachments = 1
	minGroup       = 2
	maxGroup       = 49
)

// conversationIDPattern is the OpenAPI's pattern of a conversation id:
// one-to-one "<id>-<id>" or a group's id.
var conversationIDPattern = regexp.MustCompile(`^([0-9]{1,19}-[0-9]{1,19}|[0-9]{15,19})$`)

type attachment struct {
	MediaID string `json:"media_id"`
}

// messageRequest is the body of the two send endpoints and the message of
// a group's creation: text and/or attachments.
type messageRequest struct {
	Text        *string      `json:"text,omitempty"`
	Attachments []attachment `json:"attachments,omitempty"`
}

type groupRequest struct {
	ConversationType *string         `json:"conversation_type"`
	ParticipantIDs   []string        `json:"participant_ids"`
	Message          *messageRequest `json:"message"`
}

type created struct {
	Data createdData `json:"data"`
}

type createdData struct {
	ConversationID string `json:"dm_conversation_id"`
	EventID        string `json:"dm_event_id"`
}

// message checks req (field names prefixed by prefix) and returns its
// text and media ids.
func message(req messageRequest, prefix string) (string, []int64, error) {
	text := ""
	if req.Text != nil {
		text = *req.Text
		if text == "" {
			return "", nil, apierr.InvalidParam(prefix+"text", fmt.Sprintf("The `%stext` field can not be empty.", prefix))
		}
		if n := utf8.RuneCountInString(text); n > maxText {
			return "", nil, apierr.InvalidParam(prefix+"text",
				fmt.Sprintf("The `%stext` field is %d characters long; the limit is %d.", prefix, n, maxText))
		}
	}
	if len(req.Attachments) > maxAttachments {
		return "", nil, apierr.InvalidParam(prefix+"attachments",
			fmt.Sprintf("The `%sattachments` field lists %d media; a message carries at most %d.", prefix, len(req.Attachments), maxAttachments))
	}
	var media []int64
	for _, a := range req.Attachments {
		id, ok := validation.ParseID(a.MediaID)
		if !ok {
			return "", nil, apierr.InvalidParam(prefix+"attachments.media_id",
				fmt.Sprintf("The `%sattachments.media_id` field value [%s] does not match %s.", prefix, a.MediaID, validation.IDPattern), a.MediaID)
		}
		media = append(media, id)
	}
	if text == "" && len(media) == 0 {
		return "", nil, apierr.InvalidParam(prefix+"text", fmt.Sprintf("A message needs `%stext`, `%sattachments` or both.", prefix, prefix))
	}
	return text, media, nil
}

func (m *Module) sendWith(w http.ResponseWriter, r *http.Request) error {
	participant, err := httpx.PathID(r, "participant_id")
	if err != nil {
		return err
	}
	return m.send(w, r, storage.DMSend{ParticipantID: participant})
}

func (m *Module) sendTo(w http.ResponseWriter, r *http.Request) error {
	conv := r.PathValue("dm_conversation_id")
	if !conversationIDPattern.MatchString(conv) {
		return apierr.InvalidParam("dm_conversation_id",
			fmt.Sprintf("The `dm_conversation_id` path value [%s] does not match %s.", conv, conversationIDPattern), conv)
	}
	return m.send(w, r, storage.DMSend{ConversationID: conv})
}

func (m *Module) send(w http.ResponseWriter, r *http.Request, in storage.DMSend) error {
	var req messageRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	text, media, err := message(req, "")
	if err != nil {
		return err
	}
	p := httpx.Principal(r)
	in.SenderID, in.AppID, in.Text, in.MediaIDs = p.User.ID, p.App.ID, text, media
	ev, err := m.Store.SendDM(r.Context(), in)
	if err != nil {
		return sendError(err, in)
	}
	return httpx.WriteJSON(w, http.StatusCreated, created{Data: createdData{ConversationID: ev.ConversationID, EventID: httpx.FormatID(ev.ID)}})
}

func (m *Module) createGroup(w http.ResponseWriter, r *http.Request) error {
	var req groupRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	if req.ConversationType == nil {
		return required("conversation_type")
	}
	if *req.ConversationType != "Group" {
		return apierr.InvalidParam("conversation_type", "The `conversation_type` field must be Group.", *req.ConversationType)
	}
	if req.ParticipantIDs == nil {
		return required("participant_ids")
	}
	if n := len(req.ParticipantIDs); n < minGroup || n > maxGroup {
		return apierr.InvalidParam("participant_ids",
			fmt.Sprintf("The `participant_ids` field must list %d to %d users; it lists %d.", minGroup, maxGroup, n))
	}
	p := httpx.Principal(r)
	var participants []int64
	for _, raw := range req.ParticipantIDs {
		id, ok := validation.ParseID(raw)
		if !ok {
			return apierr.InvalidParam("participant_ids",
				fmt.Sprintf("The `participant_ids` field value [%s] does not match %s.", raw, validation.IDPattern), raw)
		}
		if id == p.User.ID || slices.Contains(participants, id) {
			return apierr.InvalidParam("participant_ids",
				fmt.Sprintf("The `participant_ids` field lists [%s] twice or names the authenticated user.", raw), raw)
		}
		participants = append(participants, id)
	}
	if req.Message == nil {
		return required("message")
	}
	text, media, err := message(*req.Message, "message.")
	if err != nil {
		return err
	}
	in := storage.DMSend{SenderID: p.User.ID, AppID: p.App.ID, Text: text, MediaIDs: media}
	ev, err := m.Store.CreateDMGroup(r.Context(), in, participants)
	if errors.Is(err, storage.ErrDMRecipient) {
		return apierr.InvalidParam("participant_ids", "Every participant must be an active user other than the authenticated user.")
	}
	if errors.Is(err, storage.ErrBlocked) {
		return apierr.NotAuthorizedForResource("user", strings.Join(req.ParticipantIDs, ","),
			"You can not start a conversation with a user who blocks you or whom you block.")
	}
	if err != nil {
		return sendError(err, in)
	}
	return httpx.WriteJSON(w, http.StatusCreated, created{Data: createdData{ConversationID: ev.ConversationID, EventID: httpx.FormatID(ev.ID)}})
}

// sendError maps a refused send: an unknown recipient is the platform's
// invalid-request on participant_id, an unknown conversation (or one the
// caller is not in) a resource-not-found.
func sendError(err error, in storage.DMSend) error {
	switch {
	case errors.Is(err, storage.ErrDMRecipient) && in.ConversationID != "":
		return apierr.InvalidParam("dm_conversation_id",
			fmt.Sprintf("The other participant of the conversation [%s] is not a user you can send a direct message to.", in.ConversationID), in.ConversationID)
	case errors.Is(err, storage.ErrDMRecipient):
		raw := httpx.FormatID(in.ParticipantID)
		return apierr.InvalidParam("participant_id",
			fmt.Sprintf("The `participant_id` [%s] is not a user you can send a direct message to.", raw), raw)
	case errors.Is(err, storage.ErrBlocked) && in.ParticipantID != 0:
		raw := httpx.FormatID(in.ParticipantID)
		return apierr.NotAuthorizedForResource("user", raw,
			fmt.Sprintf("You can not send direct messages to the user [%s]: one of you blocks the other.", raw))
	case errors.Is(err, storage.ErrBlocked) && in.ConversationID != "":
		return apierr.NotAuthorizedForResource("dm_conversation", in.ConversationID,
			fmt.Sprintf("You can not send direct messages into the conversation [%s]: one of you blocks the other.", in.ConversationID))
	case errors.Is(err, storage.ErrDMMedia):
		return apierr.InvalidParam("attachments.media_id",
			"Every attached media must be a finished upload of the authenticated user.")
	case errors.Is(err, storage.ErrNotFound):
		return apierr.NotFound("dm_conversation", "dm_conversation_id", in.ConversationID)
	}
	return fmt.Errorf("send direct message: %w", err)
}

// required is the refusal of a body field that was not sent.
func required(name string) error {
	return apierr.InvalidParam(name, fmt.Sprintf("The `%s` field is required.", name))
}
