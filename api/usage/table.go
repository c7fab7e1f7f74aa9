package usage

// Resource is what a metered endpoint's data holds.
type Resource int

// Resources of metered endpoints.
const (
	None Resource = iota
	// Posts: data holds posts (each counts as a post read).
	Posts
	// Users: data holds users (each counts as a user read).
	Users
	// PostCreate: a successful answer created one post (a post written).
	PostCreate
)

// metered lists the endpoints whose responses are counted, by route
// pattern, with what their data holds: the platform's tracked post
// endpoints (lookup, search, timelines, likes, bookmarks, lists, quotes),
// the user endpoints, and post creation. Patterns this server does not
// serve are harmless. Any other endpoint is not metered at all.
var metered = map[string]Resource{
	"GET /2/tweets":                                     Posts,
	"GET /2/tweets/{id}":                                Posts,
	"GET /2/tweets/search/recent":                       Posts,
	"GET /2/tweets/search/all":                          Posts,
	"GET /2/tweets/{id}/quote_tweets":                   Posts,
	"GET /2/users/{id}/tweets":                          Posts,
	"GET /2/users/{id}/mentions":                        Posts,
	"GET /2/users/{id}/liked_tweets":                    Posts,
	"GET /2/users/{id}/bookmarks":                       Posts,
	"GET /2/users/{id}/timelines/reverse_chronological": Posts,
	"GET /2/lists/{id}/tweets":                          Posts,
	"GET /2/users":                                      Users,
	"GET /2/users/{id}":                                 Users,
	"GET /2/users/by":                                   Users,
	"GET /2/users/by/username/{username}":               Users,
	"GET /2/users/me":                                   Users,
	"GET /2/users/search":                               Users,
	"GET /2/users/{id}/followers":                       Users,
	"GET /2/users/{id}/following":                       Users,
	"GET /2/users/{id}/blocking":                        Users,
	"GET /2/users/{id}/muting":                          Users,
	"GET /2/tweets/{id}/liking_users":                   Users,
	"GET /2/tweets/{id}/retweeted_by":                   Users,
	"POST /2/tweets":                                    PostCreate,
}

// ResourceOf is what the endpoint with pattern meters (None: not metered).
func ResourceOf(pattern string) Resource { return metered[pattern] }
