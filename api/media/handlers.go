package media

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/hibiken/asynq"

	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/validation"
)

// The rules (rules.go) check everything that needs neither the store nor
// the caller; initialize checks the rest (checkOwners, checkSize).
type initializeRequest struct {
	MediaType        string   `json:"media_type" validate:"required,enum=media_type,media_type_of_category"`
	MediaCategory    string   `json:"media_category,omitempty" validate:"omitempty,enum=media_category"`
	TotalBytes       int64    `json:"total_bytes" validate:"media_total_bytes"`
	AdditionalOwners []string `json:"additional_owners,omitempty" validate:"media_owners"`
	Shared           bool     `json:"shared,omitempty"`
}

// statusCommands are the values GET /2/media/upload's command takes.
var statusCommands = []string{"STATUS"}

// initialize serves POST /2/media/upload/initialize.
func (m *Module) initialize(w http.ResponseWriter, r *http.Request) error {
	var req initializeRequest
	if err := httpx.Bind(r, m.Validator, &req); err != nil {
		return err
	}
	category := categoryOf(req)
	user := httpx.Principal(r).User
	owners, err := m.checkOwners(r.Context(), req.AdditionalOwners, user.ID)
	if err != nil {
		return err
	}
	if err := m.checkSize(r.Context(), user.ID, category, req.TotalBytes); err != nil {
		return err
	}
	media, err := m.create(r, req, category, owners)
	if err != nil {
		return err
	}
	m.Logger.InfoContext(r.Context(), "media upload initialized", "media_id", media.ID, "user_id", user.ID,
		"category", media.Category, "total_bytes", media.TotalBytes)
	return httpx.WriteJSON(w, http.StatusOK, initializeResponse{Data: initializeObject{
		ID: httpx.FormatID(media.ID), MediaKey: media.Key, ExpiresAfterSecs: secondsUntil(media.ExpiresAt, media.CreatedAt)}})
}

// checkOwners checks initialize's additional_owners (user ids, each given
// once: the media_owners rule checked that) against the caller and the
// store: none the uploader's own (self, who owns the upload already), each
// a user (checkOwnersExist).
func (m *Module) checkOwners(ctx context.Context, raw []string, self int64) ([]int64, error) {
	owners := make([]int64, len(raw))
	for i, s := range raw {
		owners[i], _ = validation.ParseID(s)
		if owners[i] == self {
			return nil, httpx.Refuse("additional_owners", validation.Problemf([]string{s}, "The `%[1]s` field names the uploader [%[2]s], who owns the upload already.", s))
		}
	}
	return owners, m.checkOwnersExist(ctx, owners)
}

// checkOwnersExist refuses additional owners that are not users (or were
// deleted).
func (m *Module) checkOwnersExist(ctx context.Context, owners []int64) error {
	if len(owners) == 0 {
		return nil
	}
	found, err := m.Store.UsersByIDs(ctx, owners)
	if err != nil {
		return fmt.Errorf("additional owners: %w", err)
	}
	for _, id := range owners {
		if !slices.ContainsFunc(found, func(u storage.User) bool { return u.ID == id && u.DeletedAt == nil }) {
			return httpx.Refuse("additional_owners", validation.Problemf([]string{fmt.Sprint(id)}, "The `%[1]s` field value [%[2]d] is not a user.", id))
		}
	}
	return nil
}

// checkSize checks a declared total_bytes against the caller's limit for
// category (larger for premium or verified users).
func (m *Module) checkSize(ctx context.Context, userID int64, category string, total int64) error {
	elevated, err := m.Store.UserMediaElevated(ctx, userID)
	if err != nil {
		return fmt.Errorf("load media limits of user %d: %w", userID, err)
	}
	limit := storage.MediaLimitFor(category, elevated)
	if limit.Bytes > 0 && total > limit.Bytes {
		return httpx.Refuse("total_bytes", validation.Problemf([]string{fmt.Sprint(total)}, "The `%[1]s` field value [%[2]d] is over the limit for %[3]s media on your account: %[4]d bytes (%[5]s).",
			total, category, limit.Bytes, describeBytes(limit.Bytes)))
	}
	if total > storage.MediaMaxUpload {
		return httpx.Refuse("total_bytes", validation.Problemf([]string{fmt.Sprint(total)}, "The `%[1]s` field value [%[2]d] cannot be uploaded in chunks: at most %[3]d segments (segment_index 0-%[4]d) of at most %[5]d bytes each, %[6]d bytes (%[7]s) in all.",
			total, storage.MediaMaxSegmentIndex+1, storage.MediaMaxSegmentIndex, storage.MediaMaxSegment, storage.MediaMaxUpload, describeBytes(storage.MediaMaxUpload)))
	}
	return nil
}

// create records the upload session of req for the caller.
func (m *Module) create(r *http.Request, req initializeRequest, category string, owners []int64) (storage.Media, error) {
	ctx := r.Context()
	id, err := m.Store.NextID(ctx)
	if err != nil {
		return storage.Media{}, fmt.Errorf("allocate media id: %w", err)
	}
	p := httpx.Principal(r)
	now := m.Clock().UTC().Truncate(time.Microsecond)
	kind := storage.MediaKindOf(category)
	media, err := m.Store.CreateMedia(ctx, storage.Media{
		ID: id, Key: storage.MediaKey(kind, id), OwnerID: p.User.ID, AppID: p.App.ID, MediaType: req.MediaType,
		Category: category, Kind: kind, TotalBytes: req.TotalBytes, Shared: req.Shared, AdditionalOwners: owners,
		State: storage.MediaUploading, CreatedAt: now, ExpiresAt: now.Add(storage.MediaUploadTTL),
	})
	if err != nil {
		return storage.Media{}, fmt.Errorf("create media upload: %w", err)
	}
	return media, nil
}

// finalize serves POST /2/media/upload/{id}/finalize. Its body, if any, is
// ignored (see Routes).
func (m *Module) finalize(w http.ResponseWriter, r *http.Request) error {
	id, err := httpx.PathID(r, "id")
	if err != nil {
		return err
	}
	ctx := r.Context()
	now := m.Clock().UTC()
	if _, err := m.uploading(ctx, httpx.Principal(r).User.ID, id, now); err != nil {
		return err
	}
	media, err := m.Store.FinalizeMedia(ctx, id, now)
	var segErr *storage.SegmentsError
	switch {
	case errors.As(err, &segErr):
		return incomplete(segErr)
	case errors.Is(err, storage.ErrNotFound):
		return notFound("id", id)
	case errors.Is(err, storage.ErrConflict): // finalized, or expired, meanwhile
		if cerr := closed(media, now); cerr != nil {
			return cerr
		}
		return apierr.Conflict(alreadyFinalized(id))
	case err != nil:
		return fmt.Errorf("finalize media %d: %w", id, err)
	}
	m.Logger.InfoContext(ctx, "media upload finalized", "media_id", media.ID, "user_id", media.OwnerID, "bytes", media.TotalBytes)
	return m.answerFinalized(w, r, media)
}

// answerFinalized enqueues the processing of media, just finalized, waits
// for it when it is an image (settle) and answers: an image that
// succeeded without processing_info (usable at once, as on the platform),
// one that failed with a 400, anything else with its processing_info.
func (m *Module) answerFinalized(w http.ResponseWriter, r *http.Request, media storage.Media) error {
	ctx := r.Context()
	m.enqueue(context.WithoutCancel(ctx), media.ID)
	media = m.settle(ctx, media)
	if media.Kind == storage.MediaPhoto && media.State == storage.MediaFailed {
		return httpx.Refuse("media", validation.Problemf([]string{httpx.FormatID(media.ID)}, "Media %[2]d cannot be used: %[3]s", media.ID, media.ErrorMessage))
	}
	obj := render(media, m.Clock())
	if media.Kind == storage.MediaPhoto && media.State == storage.MediaSucceeded {
		obj.ProcessingInfo = nil
	}
	return httpx.WriteJSON(w, http.StatusOK, mediaResponse{Data: obj})
}

// Polling of settle: from settleFirstPoll, doubling up to settleMaxPoll.
const (
	settleFirstPoll = 10 * time.Millisecond
	settleMaxPoll   = 200 * time.Millisecond
)

// settle waits, at most ImageWait, for the worker to process media when
// it is an image (docs/media-upload.md, "Images at finalize"), reading
// its record; it returns the newest record it read. Anything else, no
// queue, or a wait of 0 returns media as is. When the wait runs out the
// answer is pending (or in_progress) with processing_info, the
// platform's sign to poll STATUS; processing goes on.
func (m *Module) settle(ctx context.Context, media storage.Media) storage.Media {
	if media.Kind != storage.MediaPhoto || m.Queue == nil || m.ImageWait <= 0 {
		return media
	}
	ctx, cancel := context.WithTimeout(ctx, m.ImageWait)
	defer cancel()
	poll := settleFirstPoll
	for {
		select {
		case <-ctx.Done():
			m.Logger.WarnContext(ctx, "image not processed within the finalize wait; answered as processing", "media_id", media.ID,
				"state", media.State, "wait", m.ImageWait)
			return media
		case <-time.After(poll):
		}
		poll = min(2*poll, settleMaxPoll)
		got, err := m.Store.Media(ctx, media.ID)
		if err != nil {
			continue // the deadline decides; a slow read is retried
		}
		media = got
		if media.State.Final() {
			return media
		}
	}
}

// incomplete is the 400 of a finalize whose segments do not make up the
// declared size, naming the numbers.
func incomplete(e *storage.SegmentsError) error {
	if len(e.Missing) > 0 {
		values := make([]string, len(e.Missing))
		for i, idx := range e.Missing {
			values[i] = fmt.Sprint(idx)
		}
		return httpx.Refuse("segment_index", validation.Problemf(values, "The upload is incomplete: %[2]s. Append them, then finalize again.", e.Error()))
	}
	return httpx.Refuse("total_bytes", validation.Problemf([]string{fmt.Sprint(e.Total)}, "The upload is incomplete: %[2]s. Append the missing bytes (or replace a wrong segment), then finalize again.",
		e.Error()))
}

// enqueue hands finalized media id to the queue so processing starts at
// once (tasks.EnqueueRecorded); any failure only leaves the media to the
// sweeper.
func (m *Module) enqueue(ctx context.Context, id int64) {
	tasks.EnqueueRecorded(ctx, m.Queue, m.Logger, "finalized media", func() (*asynq.Task, error) { return tasks.NewMediaProcess(id) }, "media_id", id)
}

// status serves GET /2/media/upload?command=STATUS&media_id=.
func (m *Module) status(w http.ResponseWriter, r *http.Request) error {
	q := httpx.ReadQuery(r)
	if q.Raw("command") != "" { // empty: the command is implied
		q.Enum("command", statusCommands, "")
	}
	id := q.RequiredID("media_id")
	if err := q.Err(); err != nil {
		return err
	}
	media, err := m.owned(r.Context(), httpx.Principal(r).User.ID, id, "media_id")
	if err != nil {
		return err
	}
	if media.State == storage.MediaUploading {
		return apierr.Conflict(fmt.Sprintf("Media %d is still uploading: finalize it first (POST /2/media/upload/%d/finalize), then poll its status.", id, id))
	}
	return httpx.WriteJSON(w, http.StatusOK, mediaResponse{Data: render(media, m.Clock())})
}

// owned loads media id for user: an unknown id and another user's media
// are the same 404, naming param (the path's id or STATUS's media_id).
func (m *Module) owned(ctx context.Context, userID, id int64, param string) (storage.Media, error) {
	media, err := m.Store.Media(ctx, id)
	if errors.Is(err, storage.ErrNotFound) || (err == nil && media.OwnerID != userID) {
		return storage.Media{}, notFound(param, id)
	}
	if err != nil {
		return storage.Media{}, fmt.Errorf("load media %d: %w", id, err)
	}
	return media, nil
}

// uploading loads media id for user and checks that it still takes
// segments at now (409 otherwise).
func (m *Module) uploading(ctx context.Context, userID, id int64, now time.Time) (storage.Media, error) {
	media, err := m.owned(ctx, userID, id, "id")
	if err != nil {
		return media, err
	}
	if err := closed(media, now); err != nil {
		return media, err
	}
	return media, nil
}

// closed is the 409 of an upload that no longer takes segments or a
// finalize at now, or nil while it does.
func closed(media storage.Media, now time.Time) error {
	if media.State != storage.MediaUploading {
		return apierr.Conflict(alreadyFinalized(media.ID))
	}
	if !now.Before(media.ExpiresAt) {
		return apierr.Conflict(fmt.Sprintf("The upload session of media %d expired at %s; start a new upload with POST /2/media/upload/initialize.",
			media.ID, httpx.FormatTime(media.ExpiresAt)))
	}
	return nil
}

func alreadyFinalized(id int64) string {
	return fmt.Sprintf("Media %d is already finalized: it takes no more segments and no second finalize. Poll its processing with GET /2/media/upload?command=STATUS&media_id=%d, or start a new upload.", id, id)
}

func notFound(param string, id int64) error {
	return apierr.NotFound("media", param, httpx.FormatID(id))
}

// describeBytes renders a limit in the unit it is a whole number of.
func describeBytes(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
