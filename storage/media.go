package storage

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Media categories, exactly as the API spells them (media_category).
const (
	MediaTweetImage   = "tweet_image"
	MediaTweetGIF     = "tweet_gif"
	MediaTweetVideo   = "tweet_video"
	MediaAmplifyVideo = "amplify_video"
	MediaDMImage      = "dm_image"
	MediaDMGIF        = "dm_gif"
	MediaDMVideo      = "dm_video"
	MediaSubtitles    = "subtitles"
)

// MediaCategories lists every media category, in the API's order.
var MediaCategories = []string{MediaTweetImage, MediaTweetGIF, MediaTweetVideo, MediaAmplifyVideo,
	MediaDMImage, MediaDMGIF, MediaDMVideo, MediaSubtitles}

// MediaTypes lists every MIME type initialize accepts (the platform's
// enum); MediaTypesOf says which of them each category takes.
var MediaTypes = []string{"video/mp4", "video/webm", "video/mp2t", "video/quicktime", "text/srt", "text/vtt",
	"image/jpeg", "image/gif", "image/bmp", "image/png", "image/webp", "image/pjpeg", "image/tiff",
	"model/gltf-binary", "model/vnd.usdz+zip"}

var (
	imageTypes    = []string{"image/jpeg", "image/pjpeg", "image/png", "image/webp", "image/gif", "image/bmp", "image/tiff"}
	gifTypes      = []string{"image/gif"}
	videoTypes    = []string{"video/mp4", "video/quicktime", "video/webm", "video/mp2t"}
	subtitleTypes = []string{"text/srt", "text/vtt"}
)

// MediaTypesOf returns the MIME types category accepts.
func MediaTypesOf(category string) []string {
	switch category {
	case MediaTweetImage, MediaDMImage:
		return imageTypes
	case MediaTweetGIF, MediaDMGIF:
		return gifTypes
	case MediaTweetVideo, MediaAmplifyVideo, MediaDMVideo:
		return videoTypes
	case MediaSubtitles:
		return subtitleTypes
	}
	return nil
}

// DefaultMediaCategory is the category the platform assumes when
// initialize names none: a post's image, GIF or video by the MIME type.
func DefaultMediaCategory(mediaType string) string {
	switch {
	case slices.Contains(gifTypes, mediaType):
		return MediaTweetGIF
	case slices.Contains(videoTypes, mediaType):
		return MediaTweetVideo
	case slices.Contains(subtitleTypes, mediaType):
		return MediaSubtitles
	}
	return MediaTweetImage
}

// Media kinds (the Media object's `type`).
const (
	MediaPhoto       = "photo"
	MediaVideo       = "video"
	MediaAnimatedGIF = "animated_gif"
	MediaSubtitle    = "subtitles"
)

// MediaKindOf is the kind of media a category produces.
func MediaKindOf(category string) string {
	switch category {
	case MediaTweetGIF, MediaDMGIF:
		return MediaAnimatedGIF
	case MediaTweetVideo, MediaAmplifyVideo, MediaDMVideo:
		return MediaVideo
	case MediaSubtitles:
		return MediaSubtitle
	}
	return MediaPhoto
}

// mediaKeyPrefixes are the platform's media key prefixes per kind.
var mediaKeyPrefixes = map[string]string{MediaPhoto: "3", MediaVideo: "7", MediaAnimatedGIF: "16", MediaSubtitle: "13"}

// MediaKey is the platform's `<prefix>_<id>` key of media id of kind.
func MediaKey(kind string, id int64) string {
	return mediaKeyPrefixes[kind] + "_" + strconv.FormatInt(id, 10)
}

// MediaState is where an upload is in its life. The media.state CHECK
// constraint allows exactly MediaStates (a postgres test compares them).
// The last four are the API's processing_info.state values.
type MediaState string

// Media states.
const (
	MediaUploading  MediaState = "uploading" // initialized, segments arriving
	MediaPending    MediaState = "pending"   // finalized, waiting for a worker
	MediaInProgress MediaState = "in_progress"
	MediaSucceeded  MediaState = "succeeded"
	MediaFailed     MediaState = "failed"
)

// MediaStates lists every MediaState, in lifecycle order.
var MediaStates = []MediaState{MediaUploading, MediaPending, MediaInProgress, MediaSucceeded, MediaFailed}

// Final reports whether no further processing happens in state s.
func (s MediaState) Final() bool { return s == MediaSucceeded || s == MediaFailed }

// Upload and segment limits (docs/media-upload.md).
const (
	// MediaUploadTTL is how long an upload session, and then the finalized
	// media, stays usable (expires_after_secs).
	MediaUploadTTL = 24 * time.Hour
	// MediaMaxSegment caps one appended segment ("5 MB", read as 5 MiB).
	MediaMaxSegment = 5 << 20
	// MediaMaxSegmentIndex is the highest segment_index.
	MediaMaxSegmentIndex = 999
	// MediaMaxUpload is the most a chunked upload can carry: every
	// segment index at its largest. The spec's 8 GB and 16 GB video limits
	// are above it; initialize refuses a total it could never receive.
	MediaMaxUpload = (MediaMaxSegmentIndex + 1) * MediaMaxSegment
	// MediaCheckAfter is the check_after_secs a client gets while media is
	// not final.
	MediaCheckAfter = 1 * time.Second
)

// MediaError codes reported in processing_info.error.
const (
	MediaErrorInvalidMedia = 1 // the bytes are not what media_type says, or unreadable
	MediaErrorTooLarge     = 2 // over a size, duration or dimension limit
	MediaErrorInternal     = 3 // Aviary could not process it (retries used up)
)

// MediaLimit is what one user may upload in one category. Zero fields are
// not limited.
type MediaLimit struct {
	Bytes    int64
	Duration time.Duration
}

// DescribeDuration renders the cap for messages: "20 minutes", "140 seconds".
func (l MediaLimit) DescribeDuration() string {
	if l.Duration%time.Minute == 0 {
		return fmt.Sprintf("%d minutes", int(l.Duration/time.Minute))
	}
	return fmt.Sprintf("%d seconds", int(l.Duration/time.Second))
}

const (
	mib = 1 << 20
	gib = 1 << 30
)

// MediaLimitFor is the limit of category for a user; elevated is true for
// premium or verified users. Sizes read the spec's MB/GB as MiB/GiB (the
// platform's own total_bytes maximum is 16 GiB).
func MediaLimitFor(category string, elevated bool) MediaLimit {
	switch category {
	case MediaTweetImage, MediaDMImage:
		return MediaLimit{Bytes: 5 * mib}
	case MediaTweetGIF, MediaDMGIF:
		return MediaLimit{Bytes: 15 * mib}
	case MediaDMVideo:
		if elevated {
			return MediaLimit{Bytes: 1 * gib, Duration: 10 * time.Minute}
		}
		return MediaLimit{Bytes: 512 * mib, Duration: 140 * time.Second}
	case MediaTweetVideo, MediaAmplifyVideo:
		if elevated {
			return MediaLimit{Bytes: 16 * gib, Duration: 125 * time.Minute}
		}
		return MediaLimit{Bytes: 8 * gib, Duration: 20 * time.Minute}
	case MediaSubtitles:
		return MediaLimit{Bytes: 5 * mib}
	}
	return MediaLimit{}
}

// Media is one upload and, once processed, the media it became.
type Media struct {
	ID               int64
	Key              string // media_key
	OwnerID          int64
	AppID            int64
	MediaType        string // the declared MIME type
	Category         string
	Kind             string // MediaPhoto, MediaVideo, ...
	TotalBytes       int64
	Shared           bool
	AdditionalOwners []int64
	State            MediaState
	ProgressPercent  int
	ErrorCode        int
	ErrorName        string
	ErrorMessage     string
	Width            int
	Height           int
	DurationMS       int64
	AspectRatio      string // "W:H"
	OutputType       string // MIME type of the processed copy
	OutputKey        string // blob key of the processed copy ("" until then)
	PreviewKey       string // blob key of the poster frame / preview image
	ViewCount        int64
	AltText          string
	Attempts         int
	CreatedAt        time.Time
	ExpiresAt        time.Time // upload session, then media, expiry
	FinalizedAt      *time.Time
	ProcessedAt      *time.Time
	SweptAt          *time.Time
}

// UsableBy reports whether user may attach the media to a post.
func (m Media) UsableBy(user int64) bool {
	return m.OwnerID == user || slices.Contains(m.AdditionalOwners, user)
}

// MediaSegment is one stored copy of an appended segment. A retried
// segment is a new copy; the newest copy of an index counts.
type MediaSegment struct {
	MediaID int64
	Index   int
	Seq     int64 // order of arrival; the highest per index wins
	Key     string
	Size    int64
}

// MediaResult is what processing found and produced.
type MediaResult struct {
	Width       int
	Height      int
	DurationMS  int64
	AspectRatio string
	OutputType  string
	OutputKey   string
	PreviewKey  string
}

// MediaBlobPrefix is the key prefix of every media object.
const MediaBlobPrefix = "media/"

// MediaSegmentKey is the blob key of one stored copy of a segment; copy is
// random, so concurrent or retried appends never write the same object.
func MediaSegmentKey(id int64, copy string) string {
	return fmt.Sprintf("%s%d/segments/%s", MediaBlobPrefix, id, copy)
}

// MediaOriginalKey is the blob key of the assembled upload.
func MediaOriginalKey(id int64) string {
	return fmt.Sprintf("%s%d/original", MediaBlobPrefix, id)
}

// MediaOutputKey is the blob key of the processed copy, ext without dot.
func MediaOutputKey(id int64, ext string) string {
	return fmt.Sprintf("%s%d/media.%s", MediaBlobPrefix, id, ext)
}

// MediaPreviewKey is the blob key of the poster frame / preview image.
func MediaPreviewKey(id int64) string {
	return fmt.Sprintf("%s%d/preview.jpg", MediaBlobPrefix, id)
}

// SegmentsError says why an upload's segments do not make up its declared
// size: some indexes between 0 and the highest are missing, or the bytes
// received differ from total_bytes.
type SegmentsError struct {
	Received int64
	Total    int64
	Missing  []int // missing indexes, at most the first 10
}

func (e *SegmentsError) Error() string {
	if len(e.Missing) > 0 {
		return fmt.Sprintf("segments %v are missing (received %d of %d bytes)", e.Missing, e.Received, e.Total)
	}
	return fmt.Sprintf("received %d bytes, but total_bytes is %d", e.Received, e.Total)
}

// CheckSegments checks the newest size of each segment index against the
// declared total: indexes 0..n-1 all present and their sizes summing to
// total. It returns nil or a *SegmentsError.
func CheckSegments(total int64, sizes map[int]int64) error {
	var received int64
	highest := -1
	for idx, size := range sizes {
		received += size
		highest = max(highest, idx)
	}
	var missing []int
	for idx := 0; idx <= highest && len(missing) < 10; idx++ {
		if _, ok := sizes[idx]; !ok {
			missing = append(missing, idx)
		}
	}
	if len(missing) > 0 || received != total {
		return &SegmentsError{Received: received, Total: total, Missing: missing}
	}
	return nil
}
