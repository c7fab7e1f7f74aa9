package activity

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// PostQuery is how a post payload is rendered: the fields and expansions
// of the reference's post.* examples (a Post object with its metrics,
// entities and references; the author and referenced posts in includes).
const PostQuery = "expansions=author_id,referenced_tweets.id,in_reply_to_user_id" +
	"&tweet.fields=author_id,conversation_id,created_at,display_text_range,edit_controls,edit_history_tweet_ids," +
	"entities,id,in_reply_to_user_id,lang,paid_partnership,possibly_sensitive,public_metrics,referenced_tweets,reply_settings,text" +
	"&user.fields=created_at,description,entities,id,location,name,pinned_tweet_id,profile_image_url,protected," +
	"public_metrics,url,username,verified"

var postOptions = func() render.Options {
	o, err := render.ParseTweetQuery(PostQuery)
	if err != nil {
		panic(fmt.Sprintf("activity: PostQuery: %v", err))
	}
	return o
}()

// shown is an event's payload and includes (nil includes: none).
type shown struct {
	Payload  json.RawMessage
	Includes json.RawMessage
}

// payloads renders payloads once per batch: a post for every subscription
// it concerns.
type payloads struct {
	store Store
	posts PostRenderer
	msgs  map[int64]*postMessage
	users map[int64]*storage.User
}

type postMessage struct {
	Data     json.RawMessage `json:"data"`
	Includes json.RawMessage `json:"includes,omitempty"`
}

func newPayloads(store Store, posts PostRenderer) *payloads {
	return &payloads{store: store, posts: posts, msgs: map[int64]*postMessage{}, users: map[int64]*storage.User{}}
}

// payload is d's payload and includes; nil when it is not delivered.
func (p *payloads) payload(ctx context.Context, d Derived) (*shown, error) {
	switch {
	case d.Body != nil:
		for _, id := range d.Visible {
			if ok, err := p.publicUser(ctx, id, false); err != nil || !ok {
				return nil, err
			}
		}
		return &shown{Payload: d.Body, Includes: d.Includes}, nil
	case d.Deleted != nil:
		ok, err := p.publicUser(ctx, d.AuthorID, true)
		if err != nil || !ok {
			return nil, err
		}
		body, err := json.Marshal(map[string]string{"id": ids.Format(d.Deleted.ID), "author_id": ids.Format(d.Deleted.AuthorID)})
		return &shown{Payload: body}, err
	case d.Like != nil:
		m, err := p.post(ctx, d.PostID)
		if err != nil || m == nil {
			return nil, err
		}
		return likePayload(*d.Like, m)
	case d.Profile != nil:
		ok, err := p.publicUser(ctx, d.UserID, false)
		if err != nil || !ok {
			return nil, err
		}
		body, err := json.Marshal(map[string]string{"before": profileValue(d.Profile.Before), "after": profileValue(d.Profile.After)})
		return &shown{Payload: body}, err
	case d.PostID != 0:
		m, err := p.post(ctx, d.PostID)
		if err != nil || m == nil {
			return nil, err
		}
		return &shown{Payload: m.Data, Includes: m.Includes}, nil
	}
	return nil, nil
}

// post renders post id (nil: the public may not see it).
func (p *payloads) post(ctx context.Context, id int64) (*postMessage, error) {
	if m, ok := p.msgs[id]; ok {
		return m, nil
	}
	body, err := p.posts.PostMessage(ctx, id, postOptions)
	if err != nil {
		return nil, err
	}
	var m *postMessage
	if body != nil {
		m = &postMessage{}
		if err := json.Unmarshal(body, m); err != nil {
			return nil, fmt.Errorf("decode the rendering of post %d: %w", id, err)
		}
	}
	p.msgs[id] = m
	return m, nil
}

// publicUser reports whether user id is visible to the public (and, with
// unprotected, not protected).
func (p *payloads) publicUser(ctx context.Context, id int64, unprotected bool) (bool, error) {
	u, ok := p.users[id]
	if !ok {
		found, err := p.store.UsersByIDs(ctx, []int64{id})
		if err != nil {
			return false, fmt.Errorf("load user %d: %w", id, err)
		}
		if len(found) > 0 {
			u = &found[0]
		}
		p.users[id] = u
	}
	if u == nil || !render.UserVisible(*u) {
		return false, nil
	}
	return !unprotected || u.ProtectedAt == nil, nil
}

// likePayload is like.create's payload (the reference's like object) and
// includes: the liked post in tweets, its author in users.
func likePayload(l events.Like, m *postMessage) (*shown, error) {
	sum := md5.Sum([]byte(strconv.FormatInt(l.UserID, 10) + ":" + strconv.FormatInt(l.PostID, 10)))
	body, err := json.Marshal(map[string]string{
		"id": hex.EncodeToString(sum[:]), "liked_tweet_id": ids.Format(l.PostID),
		"liked_tweet_author_id": ids.Format(l.PostAuthorID), "created_at": render.FormatTime(l.PostCreatedAt),
		"timestamp_ms": strconv.FormatInt(l.LikedAt.UnixMilli(), 10),
	})
	if err != nil {
		return nil, err
	}
	inc := map[string]json.RawMessage{}
	if len(m.Includes) > 0 {
		if err := json.Unmarshal(m.Includes, &inc); err != nil {
			return nil, fmt.Errorf("decode includes of post %d: %w", l.PostID, err)
		}
	}
	var tweets []json.RawMessage
	if raw, ok := inc["tweets"]; ok {
		if err := json.Unmarshal(raw, &tweets); err != nil {
			return nil, fmt.Errorf("decode included posts of post %d: %w", l.PostID, err)
		}
	}
	if inc["tweets"], err = json.Marshal(append([]json.RawMessage{m.Data}, tweets...)); err != nil {
		return nil, err
	}
	includes, err := json.Marshal(inc)
	return &shown{Payload: body, Includes: includes}, err
}

// profileValue is a profile.update payload's before or after as the
// platform's schema has it, a string: booleans (a badge, in logs written
// before the badges' values became strings) as "true"/"false", nothing as "".
func profileValue(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}
