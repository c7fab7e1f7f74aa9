// Package objects is the API tier's side of the object renderer (package
// render, which both tiers share): it reads a request's `*.fields` and
// `expansions` parameters into render.Options with the API's error
// messages, says who views, and words the partial errors of posts that can
// not be shown. Every endpoint that answers with posts or users parses its
// parameters here and hydrates its records with a render.Hydrator, so they
// all show the same object the same way (docs/posts-fields.md).
package objects

import (
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage/ids"
)

// ParseTweetOptions reads the fields and expansions of an endpoint that
// answers with posts (render.TweetParams). Every unknown name of every
// parameter is reported in one invalid-request error.
func ParseTweetOptions(r *http.Request) (render.Options, error) {
	q := httpx.ReadQuery(r)
	o := render.TweetOptions(q.List)
	return o, q.Err()
}

// ParseUserOptions reads the fields and expansions of an endpoint that
// answers with users (render.UserParams).
func ParseUserOptions(r *http.Request) (render.Options, error) {
	q := httpx.ReadQuery(r)
	o := render.UserOptions(q.List)
	return o, q.Err()
}

// ViewerOf is the request's user-context caller, 0 for app-only requests.
func ViewerOf(r *http.Request) render.Viewer {
	if u := httpx.Principal(r).User; u != nil {
		return render.Viewer(u.ID)
	}
	return 0
}

// PostError is the partial error of a post that can not be shown: a
// resource-not-found for a gone post, a not-authorized-for-resource for a
// protected author's, both naming param.
func PostError(id int64, v render.Visibility, param string) *apierr.Error {
	value := ids.Format(id)
	if v == render.Protected {
		e := apierr.NotAuthorizedForResource("tweet", value, fmt.Sprintf("Sorry, you are not authorized to see the Post with %s: [%s].", param, value))
		e.Title = "Authorization Error"
		e.Extra["parameter"] = param
		e.Extra["value"] = value
		e.Status = 0
		return e
	}
	e := apierr.NotFound("tweet", param, value)
	e.Status = 0
	return e
}

// Problems renders partial errors for a response's errors array.
func Problems(w ProblemRenderer, errs []*apierr.Error) []map[string]any {
	if len(errs) == 0 {
		return nil
	}
	out := make([]map[string]any, len(errs))
	for i, e := range errs {
		out[i] = w.ProblemJSON(e)
	}
	return out
}

// ProblemRenderer renders a problem embedded in a response's errors array
// (apierr.Writer).
type ProblemRenderer interface {
	ProblemJSON(e *apierr.Error) map[string]any
}
