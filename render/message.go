package render

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage/ids"
)

// postMessage is one post as the filtered stream shows it, without the
// rules it matched (WithMatchingRules adds matching_rules after them).
type postMessage struct {
	Data     Tweet     `json:"data"`
	Includes *Includes `json:"includes,omitempty"`
}

type matchingRule struct {
	ID  string `json:"id"`
	Tag string `json:"tag,omitempty"`
}

// PostMessage is the JSON object {data, includes} of post id rendered with
// o for the public (viewer 0), as the filtered stream and webhook stream
// links deliver it; nil (and no error) when the public may not see it:
// unknown, deleted, its author gone or protected, a repost of such a post.
func (h *Hydrator) PostMessage(ctx context.Context, id int64, o Options) ([]byte, error) {
	found, err := h.Store.PostsByIDs(ctx, []int64{id})
	if err != nil {
		return nil, fmt.Errorf("render: load post %d: %w", id, err)
	}
	if len(found) == 0 {
		return nil, nil
	}
	vis, err := h.Visibility(ctx, found, 0)
	if err != nil {
		return nil, fmt.Errorf("render: post %d: %w", id, err)
	}
	if vis[id] != Visible {
		return nil, nil
	}
	res, err := h.Tweets(ctx, found, o, 0)
	if err != nil {
		return nil, fmt.Errorf("render: post %d: %w", id, err)
	}
	body, err := json.Marshal(postMessage{Data: res.Data[0], Includes: res.Includes})
	if err != nil {
		return nil, fmt.Errorf("render: encode post %d: %w", id, err)
	}
	return body, nil
}

// WithMatchingRules is body (a PostMessage, which it does not change) with
// "matching_rules":[{id, tag}] appended as its last member, the rules in
// the order given: the filtered stream's line without its "\r\n", and a
// webhook stream link's delivery as is. It copies body once and encodes
// only the rules, so one rendering serves every stream and link.
func WithMatchingRules(body []byte, rules []events.RuleHit) ([]byte, error) {
	if len(body) < 2 || body[len(body)-1] != '}' {
		return nil, fmt.Errorf("render: matching rules: %q is not a JSON object", body)
	}
	list := make([]matchingRule, len(rules))
	for i, r := range rules {
		list[i] = matchingRule{ID: ids.Format(r.RuleID), Tag: r.Tag}
	}
	tail, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("render: encode matching rules: %w", err)
	}
	// 24 leaves room for the stream's "\r\n" (its append does not copy).
	out := make([]byte, 0, len(body)+len(tail)+24)
	out = append(out, body[:len(body)-1]...) // without its closing brace
	out = append(append(append(out, `,"matching_rules":`...), tail...), '}')
	return out, nil
}

// Messages renders the posts webhook stream links deliver: each link keeps
// the canonical query string of its fields and expansions (CanonicalQuery),
// and its posts go out exactly as the filtered stream shows them.
type Messages struct {
	Hydrator *Hydrator
}

// Render is the message of post id for a link whose stored query is query
// (ParseTweetQuery) that matched rules: {data, includes, matching_rules}
// without "\r\n", byte for byte the filtered stream's line. It is nil (and
// no error) when the public may not see the post. A query that does not
// parse is an error: the API validated it before storing it.
func (m Messages) Render(ctx context.Context, id int64, query string, rules []events.RuleHit) ([]byte, error) {
	o, err := ParseTweetQuery(query)
	if err != nil {
		return nil, err
	}
	body, err := m.Hydrator.PostMessage(ctx, id, o)
	if err != nil || body == nil {
		return nil, err
	}
	return WithMatchingRules(body, rules)
}
