package posts

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"unicode"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	postops "github.com/aviary-dev/aviary/ops/posts"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

// blank reports whether text shows nothing: only whitespace (any Unicode
// space, such as U+00A0 or U+3000), invisible format characters (such as
// U+200B ZERO WIDTH SPACE or U+FEFF) and the letters that render as
// nothing (Hangul fillers, the blank Braille pattern). The body decoder has
// already refused invalid UTF-8 and unpaired surrogates.
func blank(text string) bool {
	for _, r := range text {
		if !unicode.IsSpace(r) && !unicode.Is(unicode.Cf, r) && !invisibleLetter(r) {
			return false
		}
	}
	return true
}

// invisibleLetter reports the code points that are letters or symbols but
// draw nothing.
func invisibleLetter(r rune) bool {
	switch r {
	case '\u115F', '\u1160', '\u3164', '\uFFA0', '\u2800':
		return true
	}
	return false
}

func (m *Module) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	user := httpx.Principal(r).User
	_, err = postops.Delete(r.Context(), m.Store, user.ID, id, m.Clock().UTC())
	switch {
	case errors.Is(err, storage.ErrNotFound): // unknown, deleted, or deleted concurrently
		return apierr.NotFound("tweet", "id", httpx.FormatID(id))
	case errors.Is(err, postops.ErrNotAuthor):
		return apierr.NotAuthorizedForResource("tweet", httpx.FormatID(id), "You are not allowed to delete a Post you did not author.")
	case err != nil:
		return err
	}
	return httpx.WriteJSON(w, http.StatusOK, deleteResponse{Data: deleted{Deleted: true}})
}

// postWithAuthor loads post id and its author; a zero post when there is
// no such post.
func (m *Module) postWithAuthor(ctx context.Context, id int64) (storage.Post, storage.User, error) {
	found, err := m.Store.PostsByIDs(ctx, []int64{id})
	if err != nil {
		return storage.Post{}, storage.User{}, fmt.Errorf("load post %d: %w", id, err)
	}
	if len(found) == 0 {
		return storage.Post{}, storage.User{}, nil
	}
	authors, err := m.Store.UsersByIDs(ctx, []int64{found[0].AuthorID})
	if err != nil || len(authors) == 0 {
		return storage.Post{}, storage.User{}, fmt.Errorf("load author of post %d: %w", id, err)
	}
	return found[0], authors[0], nil
}

func formatIDs(list []int64, self int64) []string {
	if len(list) == 0 {
		return []string{ids.Format(self)}
	}
	out := make([]string, len(list))
	for i, id := range list {
		out[i] = ids.Format(id)
	}
	return out
}
