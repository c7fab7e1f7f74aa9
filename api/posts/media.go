package posts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/validation"
)

// Media attachments (docs/media-upload.md, "Posts"): 1 to 4 ids of media
// the author owns or is an additional owner of, processed and not expired;
// up to 4 photos, or 1 animated GIF, or 1 video, never mixed. A video
// longer than the author's limit is refused with 403.

// maxPostMedia is how many media one post takes (photos; a GIF or a video
// comes alone).
const maxPostMedia = 4

// mediaIDsParam names the attachment list in errors.
const mediaIDsParam = "media.media_ids"

// mediaRequest is POST /2/tweets' `media` object.
type mediaRequest struct {
	MediaIDs []string `json:"media_ids" validate:"post_media_ids"`
}

// attachments checks the media req names for author at now and returns
// their ids in request order (nil without media).
func (m *Module) attachments(ctx context.Context, author int64, req *mediaRequest, now time.Time) ([]int64, error) {
	if req == nil {
		return nil, nil
	}
	ids := make([]int64, len(req.MediaIDs))
	for i, s := range req.MediaIDs {
		ids[i], _ = validation.ParseID(s) // checked by the post_media_ids rule
	}
	found, err := m.Store.MediaByIDs(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("load media %v: %w", ids, err)
	}
	byID := make(map[int64]storage.Media, len(found))
	for _, md := range found {
		byID[md.ID] = md
	}
	list := make([]storage.Media, 0, len(ids))
	for _, id := range ids {
		md, ok := byID[id]
		if !ok || !md.UsableBy(author) {
			return nil, mediaError(httpx.FormatID(id), "does not exist or is not yours to post: attach media you uploaded or were made an additional owner of")
		}
		if err := usable(md, now); err != nil {
			return nil, err
		}
		list = append(list, md)
	}
	if err := checkMix(list); err != nil {
		return nil, err
	}
	if err := m.checkLength(ctx, author, list); err != nil {
		return nil, err
	}
	return ids, nil
}

// usable checks that md, media the author may use, can be attached at
// now: processed, not expired, not subtitles.
func usable(md storage.Media, now time.Time) error {
	id := httpx.FormatID(md.ID)
	switch {
	case md.State == storage.MediaUploading:
		return mediaError(id, "is not finalized yet: finalize the upload and wait until its processing succeeded")
	case md.State == storage.MediaFailed:
		return mediaError(id, "failed processing and can not be posted; upload it again")
	case md.State != storage.MediaSucceeded:
		return mediaError(id, fmt.Sprintf("is still processing (state %s); poll GET /2/media/upload?command=STATUS&media_id=%s until it succeeded", md.State, id))
	case !now.Before(md.ExpiresAt):
		return mediaError(id, fmt.Sprintf("expired at %s; upload it again", httpx.FormatTime(md.ExpiresAt)))
	case md.Kind == storage.MediaSubtitle:
		return mediaError(id, "is subtitles, which can not be attached to a post")
	}
	return nil
}

func mediaError(id, what string) error {
	return httpx.Refuse(mediaIDsParam, validation.Problemf([]string{id}, "The media [%[2]s] %[3]s.", id, what))
}

// checkMix allows up to 4 photos, or 1 animated GIF, or 1 video.
func checkMix(list []storage.Media) error {
	if len(list) < 2 {
		return nil
	}
	kinds := make([]string, len(list))
	values := make([]string, len(list))
	mixed := false
	for i, md := range list {
		kinds[i], values[i] = md.Kind, httpx.FormatID(md.ID)
		mixed = mixed || md.Kind != storage.MediaPhoto
	}
	if !mixed {
		return nil
	}
	return httpx.Refuse(mediaIDsParam, validation.Problemf(values, "A post takes up to %[2]d photos, or 1 animated GIF, or 1 video, never mixed; `%[1]s` names %[3]s.",
		maxPostMedia, strings.Join(kinds, ", ")))
}

// checkLength refuses (403) a video longer than author may post: the
// author's limit, which may be shorter than the uploader's (additional
// owners).
func (m *Module) checkLength(ctx context.Context, author int64, list []storage.Media) error {
	for _, md := range list {
		if md.Kind != storage.MediaVideo {
			continue
		}
		elevated, err := m.Store.UserMediaElevated(ctx, author)
		if err != nil {
			return fmt.Errorf("load media limits of user %d: %w", author, err)
		}
		limit := storage.MediaLimitFor(md.Category, elevated)
		length := time.Duration(md.DurationMS) * time.Millisecond
		if limit.Duration > 0 && length > limit.Duration {
			return apierr.Forbidden(fmt.Sprintf("The video [%s] is %s long, longer than you may post: the allowed length for your account is %s.",
				httpx.FormatID(md.ID), describeLength(length), limit.DescribeDuration()))
		}
	}
	return nil
}

// describeLength renders a video length: "25 minutes 3 seconds".
func describeLength(d time.Duration) string {
	d = d.Round(time.Second)
	minutes, seconds := int(d/time.Minute), int(d%time.Minute/time.Second)
	switch {
	case minutes == 0:
		return fmt.Sprintf("%d seconds", seconds)
	case seconds == 0:
		return fmt.Sprintf("%d minutes", minutes)
	}
	return fmt.Sprintf("%d minutes %d seconds", minutes, seconds)
}
