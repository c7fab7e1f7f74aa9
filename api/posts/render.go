package posts

import "github.com/aviary-dev/aviary/render"

type createResponse struct {
	Data createdPost `json:"data"`
}

type createdPost struct {
	ID                  string   `json:"id"`
	Text                string   `json:"text"`
	EditHistoryTweetIDs []string `json:"edit_history_tweet_ids"`
}

type deleteResponse struct {
	Data deleted `json:"data"`
}

type deleted struct {
	Deleted bool `json:"deleted"`
}

// lookupResponse answers GET /2/tweets; errors are partial ones (posts
// that can not be shown), next to the ones that can.
type lookupResponse struct {
	Data     []render.Tweet   `json:"data,omitempty"`
	Includes *render.Includes `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
}

// singleResponse answers GET /2/tweets/{id}.
type singleResponse struct {
	Data     *render.Tweet    `json:"data,omitempty"`
	Includes *render.Includes `json:"includes,omitempty"`
	Errors   []map[string]any `json:"errors,omitempty"`
}

type likeResponse struct {
	Data liked `json:"data"`
}

type liked struct {
	Liked bool `json:"liked"`
}

type repostResponse struct {
	Data reposted `json:"data"`
}

type reposted struct {
	Retweeted bool   `json:"retweeted"`
	RestID    string `json:"rest_id,omitempty"`
}
