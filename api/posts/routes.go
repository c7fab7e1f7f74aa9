// Package posts serves the post ("tweet") endpoints: creating a post as a
// user (replies, quotes, edits, media attachments), looking posts up with
// fields and expansions, deleting one's own posts, and likes and reposts
// (docs/posts.md).
package posts

import (
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/auth"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/api/objects"
	"github.com/aviary-dev/aviary/domain/oauth2"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/validation"
)

// Deps is what the post endpoints need.
type Deps struct {
	Store     Store
	Validator *validation.Validator
	Problems  objects.ProblemRenderer
	Clock     func() time.Time
	// CreatesPerDay are the 24-hour limits of POST /2/tweets (zero fields:
	// DefaultAppCreatesPerDay, DefaultUserCreatesPerDay).
	CreatesPerDay DayLimits
	// MediaURLs builds the media objects' url and preview_image_url
	// (nil: they are not shown).
	MediaURLs *render.MediaURLs
}

// DayLimits are the 24-hour limits of post creation: per app, and per user
// (and app, as every per-user count). AVIARY_RATE_LIMIT_SCALE scales them
// like every limit.
type DayLimits struct {
	App, User int
}

// Default 24-hour limits of POST /2/tweets: the platform documents 10,000
// posts per app and 24 hours; its rate-limit table shows no per-user
// 24-hour limit, so the user's is the platform's account-wide daily post
// limit, 2,400 (docs/auth-and-rate-limits.md).
const (
	DefaultAppCreatesPerDay  = 10000
	DefaultUserCreatesPerDay = 2400
)

// Module is the posts feature.
type Module struct {
	Deps
	Hydrator *render.Hydrator
}

// New builds the module.
func New(d Deps) *Module {
	if d.Clock == nil {
		d.Clock = time.Now
	}
	if d.Problems == nil {
		d.Problems = apierr.Writer{}
	}
	if d.CreatesPerDay.App <= 0 {
		d.CreatesPerDay.App = DefaultAppCreatesPerDay
	}
	if d.CreatesPerDay.User <= 0 {
		d.CreatesPerDay.User = DefaultUserCreatesPerDay
	}
	if d.Validator != nil {
		registerRules(d.Validator)
	}
	return &Module{Deps: d, Hydrator: &render.Hydrator{Store: d.Store, Clock: d.Clock, MediaURLs: d.MediaURLs}}
}

// Routes lists the post endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	return []httpx.Endpoint{
		{
			Pattern: "POST /2/tweets",
			Auth:    auth.UserContext.Writes().Needs(oauth2.TweetRead, oauth2.TweetWrite, oauth2.UsersRead),
			// The user's 24-hour count before the app's: a request the
			// user's refuses costs the app nothing (docs/auth-and-rate-limits.md).
			Limit: httpx.Limit{Name: "tweets_create", Requests: 200, Scope: httpx.PerUser, Also: []httpx.Limit{
				{Name: "tweets_create_user_24h", Requests: m.CreatesPerDay.User, Window: 24 * time.Hour, Scope: httpx.PerUser, Headers: httpx.HeadersUser24Hour},
				{Name: "tweets_create_app_24h", Requests: m.CreatesPerDay.App, Window: 24 * time.Hour, Scope: httpx.PerApp, Headers: httpx.HeadersApp24Hour},
			}},
			Body:   httpx.JSONBody(httpx.DefaultMaxBody),
			Handle: m.create,
		},
		{
			Pattern: "DELETE /2/tweets/{id}",
			Auth:    auth.UserContext.Writes().Needs(oauth2.TweetRead, oauth2.TweetWrite, oauth2.UsersRead),
			Limit:   httpx.Limit{Name: "tweets_delete", Requests: 50, Scope: httpx.PerUser},
			Handle:  m.delete,
		},
		{
			Pattern: "GET /2/tweets",
			Auth:    auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead),
			Limit:   httpx.Limit{Name: "tweets_lookup", Requests: 900, Scope: httpx.PerUser},
			Query:   append([]string{"ids"}, render.TweetParams...),
			Handle:  m.lookup,
		},
		{
			Pattern: "GET /2/tweets/{id}",
			Auth:    auth.AppOrUser.Needs(oauth2.TweetRead, oauth2.UsersRead),
			Limit:   httpx.Limit{Name: "tweets_lookup", Requests: 900, Scope: httpx.PerUser},
			Query:   render.TweetParams,
			Handle:  m.lookupOne,
		},
		{
			Pattern: "POST /2/users/{id}/likes",
			Auth:    auth.UserContext.Writes().Needs(oauth2.TweetRead, oauth2.UsersRead, oauth2.LikeWrite),
			Limit:   httpx.Limit{Name: "likes_create", Requests: 1000, Window: 24 * time.Hour, Scope: httpx.PerUser},
			Body:    httpx.JSONBody(httpx.DefaultMaxBody),
			Handle:  m.like,
		},
		{
			Pattern: "DELETE /2/users/{id}/likes/{tweet_id}",
			Auth:    auth.UserContext.Writes().Needs(oauth2.TweetRead, oauth2.UsersRead, oauth2.LikeWrite),
			Limit:   httpx.Limit{Name: "likes_delete", Requests: 1000, Window: 24 * time.Hour, Scope: httpx.PerUser},
			Handle:  m.unlike,
		},
		{
			Pattern: "POST /2/users/{id}/retweets",
			Auth:    auth.UserContext.Writes().Needs(oauth2.TweetRead, oauth2.TweetWrite, oauth2.UsersRead),
			Limit:   httpx.Limit{Name: "retweets_create", Requests: 50, Scope: httpx.PerUser},
			Body:    httpx.JSONBody(httpx.DefaultMaxBody),
			Handle:  m.repost,
		},
		{
			Pattern: "DELETE /2/users/{id}/retweets/{source_tweet_id}",
			Auth:    auth.UserContext.Writes().Needs(oauth2.TweetRead, oauth2.TweetWrite, oauth2.UsersRead),
			Limit:   httpx.Limit{Name: "retweets_delete", Requests: 50, Scope: httpx.PerUser},
			Handle:  m.unrepost,
		},
	}
}
