package dms

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

const dmEventFieldsParam = "dm_event.fields"

// dmEventFields: the defaults are the platform's (id, event_type, text);
// the allowed ones the OpenAPI's enum plus sender_id and participant_ids,
// which the platform's data dictionary lists (docs/direct-messages.md).
var dmEventFields = render.ObjectFields{
	Default: []string{"id", "event_type", "text"},
	Allowed: []string{"attachments", "created_at", "dm_conversation_id", "entities", "event_type", "id", "participant_ids", "sender_id", "text"},
}

// Expansions of the DM event answers (the OpenAPI's, and the data
// dictionary's referenced_tweets.id). Messages never reference posts in
// Aviary, so the two post expansions expand nothing.
const (
	expandSender       = "sender_id"
	expandParticipants = "participant_ids"
	expandMedia        = "attachments.media_keys"
)

var dmExpansions = []string{expandMedia, expandParticipants, "referenced_posts", "referenced_tweets.id", expandSender}

// expansionField is the field an expansion brings into the events shown.
var expansionField = map[string]string{expandSender: "sender_id", expandParticipants: "participant_ids", expandMedia: "attachments"}

var dmEventTypes = []string{storage.DMMessageCreate, storage.DMParticipantsJoin, storage.DMParticipantsLeave}

// options are what a DM event request asked to see.
type options struct {
	fields render.FieldSet
	user   render.FieldSet
	media  render.FieldSet
	expand map[string]bool
}

func readOptions(q *httpx.Query) options {
	o := options{expand: map[string]bool{}}
	fields := q.List(dmEventFieldsParam, dmEventFields.Allowed)
	for _, e := range q.List(render.ExpansionsParam, dmExpansions) {
		o.expand[e] = true
		if f := expansionField[e]; f != "" {
			fields = append(fields, f)
		}
	}
	o.fields = dmEventFields.With(fields...)
	o.user = render.UserFields.With(q.List(render.UserFieldsParam, render.UserFields.Allowed)...)
	o.media = render.MediaFields.With(q.List(render.MediaFieldsParam, render.MediaFields.Allowed)...)
	q.List(render.TweetFieldsParam, render.TweetFields.Allowed)
	q.List(render.PostFieldsParam, render.TweetFields.Allowed) // the description's name of tweet.fields
	return o
}

// dmEvent is a DmEvent object.
type dmEvent struct {
	ID             string            `json:"id"`
	EventType      string            `json:"event_type"`
	Text           *string           `json:"text,omitempty"`
	SenderID       string            `json:"sender_id,omitempty"`
	ParticipantIDs []string          `json:"participant_ids,omitempty"`
	ConversationID string            `json:"dm_conversation_id,omitempty"`
	CreatedAt      string            `json:"created_at,omitempty"`
	Attachments    *attachments      `json:"attachments,omitempty"`
	Entities       *storage.Entities `json:"entities,omitempty"`
}

type attachments struct {
	MediaKeys []string `json:"media_keys"`
}

// renderEvent shows e with fields f. ParticipantsJoin and
// ParticipantsLeave events always show their participant_ids (what the
// event is about).
func renderEvent(e storage.DMEvent, f render.FieldSet) dmEvent {
	out := dmEvent{ID: httpx.FormatID(e.ID), EventType: e.Type}
	if f.Has("text") && e.Type == storage.DMMessageCreate {
		out.Text = &e.Text
	}
	if f.Has("sender_id") {
		out.SenderID = httpx.FormatID(e.SenderID)
	}
	if len(e.ParticipantIDs) > 0 && (f.Has("participant_ids") || e.Type != storage.DMMessageCreate) {
		for _, id := range e.ParticipantIDs {
			out.ParticipantIDs = append(out.ParticipantIDs, httpx.FormatID(id))
		}
	}
	if f.Has("dm_conversation_id") {
		out.ConversationID = e.ConversationID
	}
	if f.Has("created_at") {
		out.CreatedAt = httpx.FormatTime(e.CreatedAt)
	}
	if f.Has("attachments") && len(e.MediaKeys) > 0 {
		out.Attachments = &attachments{MediaKeys: e.MediaKeys}
	}
	if f.Has("entities") && e.Text != "" {
		if x := posttext.Extract(e.Text); !x.Empty() {
			out.Entities = &x
		}
	}
	return out
}

type includes struct {
	Users []render.User  `json:"users,omitempty"`
	Media []render.Media `json:"media,omitempty"`
}

type listResponse struct {
	Data     []dmEvent        `json:"data,omitempty"`
	Includes *includes        `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
	Meta     listMeta         `json:"meta"`
}

type listMeta struct {
	ResultCount int    `json:"result_count"`
	NextToken   string `json:"next_token,omitempty"`
}

type oneResponse struct {
	Data     *dmEvent         `json:"data,omitempty"`
	Includes *includes        `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
}

// render renders evs and their expansions.
func (m *Module) render(ctx context.Context, r *http.Request, evs []storage.DMEvent, o options) ([]dmEvent, *includes, error) {
	data := make([]dmEvent, 0, len(evs))
	var users, media []int64
	for _, e := range evs {
		data = append(data, renderEvent(e, o.fields))
		if o.expand[expandSender] {
			users = append(users, e.SenderID)
		}
		if o.expand[expandParticipants] {
			users = append(users, e.ParticipantIDs...)
		}
		if o.expand[expandMedia] {
			media = append(media, e.MediaIDs...)
		}
	}
	inc := &includes{}
	var err error
	if inc.Users, err = m.users(ctx, r, users, o); err != nil {
		return nil, nil, err
	}
	if inc.Media, err = m.media(ctx, media, o); err != nil {
		return nil, nil, err
	}
	if len(inc.Users) == 0 && len(inc.Media) == 0 {
		inc = nil
	}
	return data, inc, nil
}

func unique(list []int64) []int64 {
	var out []int64
	for _, id := range list {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func (m *Module) users(ctx context.Context, r *http.Request, list []int64, o options) ([]render.User, error) {
	if len(list) == 0 {
		return nil, nil
	}
	found, err := m.Store.UsersByIDs(ctx, unique(list))
	if err != nil {
		return nil, fmt.Errorf("load users of direct messages: %w", err)
	}
	found = slices.DeleteFunc(found, func(u storage.User) bool { return !render.UserVisible(u) })
	res, err := m.hydrator.Users(ctx, found, render.Options{User: o.user, Expand: map[string]bool{}}, objects.ViewerOf(r))
	return res.Data, err
}

func (m *Module) media(ctx context.Context, list []int64, o options) ([]render.Media, error) {
	if len(list) == 0 {
		return nil, nil
	}
	found, err := m.Store.MediaByIDs(ctx, unique(list))
	if err != nil {
		return nil, fmt.Errorf("load media of direct messages: %w", err)
	}
	out := make([]render.Media, 0, len(found))
	for _, md := range found {
		out = append(out, render.MediaObject(md, o.media, m.hydrator.MediaURLs))
	}
	return out, nil
}

// list answers a page of the caller's events of conversation conv ("":
// all their conversations); a conversation the caller is not in is
// answered by notIn.
func (m *Module) list(w http.ResponseWriter, r *http.Request, conv string, notIn func() error) error {
	q := httpx.ReadQuery(r)
	l := storage.DMListing{ConversationID: conv, Limit: q.Int("max_results", 1, 100, 100)}
	l.Types = q.List("event_types", dmEventTypes)
	if tok, ok := q.String("pagination_token"); ok {
		id, valid := httpx.ParsePageToken(tok)
		if !valid {
			q.Fail("pagination_token", fmt.Sprintf("The `pagination_token` query parameter value [%s] is not a valid token.", tok), tok)
		}
		l.BeforeID = id
	}
	o := readOptions(q)
	if err := q.Err(); err != nil {
		return err
	}
	page := l.Limit
	l.Limit++
	evs, err := m.Store.DMEvents(r.Context(), httpx.Principal(r).User.ID, l)
	if errors.Is(err, storage.ErrNotFound) {
		return notIn()
	}
	if err != nil {
		return err
	}
	var meta listMeta
	if len(evs) > page {
		evs = evs[:page]
		meta.NextToken = httpx.PageToken(evs[page-1].ID)
	}
	data, inc, err := m.render(r.Context(), r, evs, o)
	if err != nil {
		return err
	}
	meta.ResultCount = len(data)
	return httpx.WriteJSON(w, http.StatusOK, listResponse{Data: data, Includes: inc, Meta: meta})
}

func (m *Module) listAll(w http.ResponseWriter, r *http.Request) error {
	// Every conversation of the caller's: never refused.
	return m.list(w, r, "", func() error { return httpx.WriteJSON(w, http.StatusOK, listResponse{}) })
}

func (m *Module) listWith(w http.ResponseWriter, r *http.Request) error {
	participant, err := httpx.PathID(r, "participant_id")
	if err != nil {
		return err
	}
	conv := storage.OneToOneConversationID(httpx.Principal(r).User.ID, participant)
	// No conversation with that user yet: an empty page.
	return m.list(w, r, conv, func() error { return httpx.WriteJSON(w, http.StatusOK, listResponse{}) })
}

func (m *Module) listConversation(w http.ResponseWriter, r *http.Request) error {
	conv := r.PathValue("id")
	if !conversationIDPattern.MatchString(conv) {
		return apierr.InvalidParam("id", fmt.Sprintf("The `id` path value [%s] does not match %s.", conv, conversationIDPattern), conv)
	}
	return m.list(w, r, conv, func() error { return apierr.NotFound("dm_conversation", "id", conv) })
}

func (m *Module) lookupOne(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "event_id")
	if err != nil {
		return err
	}
	q := httpx.ReadQuery(r)
	o := readOptions(q)
	if err := q.Err(); err != nil {
		return err
	}
	ev, err := m.Store.DMEvent(r.Context(), httpx.Principal(r).User.ID, id)
	if errors.Is(err, storage.ErrNotFound) {
		e := apierr.NotFound("dm_event", "event_id", httpx.FormatID(id))
		e.Status = 0
		return httpx.WriteJSON(w, http.StatusOK, oneResponse{Errors: objects.Problems(apierr.Writer{}, []*apierr.Error{e})})
	}
	if err != nil {
		return err
	}
	data, inc, err := m.render(r.Context(), r, []storage.DMEvent{ev}, o)
	if err != nil {
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, oneResponse{Data: &data[0], Includes: inc})
}

type deleteResponse struct {
	Data struct {
		Deleted bool `json:"deleted"`
	} `json:"data"`
}

// delete hides one of the caller's own messages from every participant;
// another's message is 403, an event the caller can not see 404.
func (m *Module) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "event_id")
	if err != nil {
		return err
	}
	user := httpx.Principal(r).User.ID
	err = m.Store.DeleteDM(r.Context(), user, id)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return apierr.NotFound("dm_event", "event_id", httpx.FormatID(id))
	case errors.Is(err, storage.ErrDMNotSender):
		return apierr.NotAuthorizedForResource("dm_event", httpx.FormatID(id),
			fmt.Sprintf("You can delete only the messages you sent; [%s] is not one.", httpx.FormatID(id)))
	case err != nil:
		return fmt.Errorf("delete direct message %d: %w", id, err)
	}
	var out deleteResponse
	out.Data.Deleted = true
	return httpx.WriteJSON(w, http.StatusOK, out)
}
