package httpx

import (
	"fmt"
	"net/http"

	"github.com/aviary-dev/aviary/api/apierr"
)

// ActingUser is the user id of path value param when it is the caller: a
// user likes, reposts, follows, mutes and blocks only as themself; another
// id is 403 not-authorized-for-resource naming that user.
func ActingUser(r *http.Request, param string) (int64, error) {
	id, err := PathID(r, param)
	if err != nil {
		return 0, err
	}
	user := Principal(r).User
	if id != user.ID {
		return 0, apierr.NotAuthorizedForResource("user", FormatID(id),
			fmt.Sprintf("You are not authorized to act for the user [%s]; you can act only as the authenticated user [%s].", FormatID(id), FormatID(user.ID)))
	}
	return id, nil
}
