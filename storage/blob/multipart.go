package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ErrUploadNotFound is returned by the Multiparter methods for an upload id
// that is unknown, belongs to another key, or was already completed or
// aborted.
var ErrUploadNotFound = errors.New("blob: multipart upload not found")

// ErrInvalidPart is returned for a part number outside [1, MaxPartNumber], a
// part larger than MaxPartSize, and by CompleteMultipart for a part list that
// is empty, out of order, names a part that was not uploaded (or whose ETag
// no longer matches), or has a part other than the last smaller than
// MinPartSize.
var ErrInvalidPart = errors.New("blob: invalid multipart part")

// MinPartSize is the smallest size of every part of a multipart upload but
// the last (S3's rule, which every driver enforces at CompleteMultipart).
const MinPartSize = 5 << 20

// MaxPartSize is the largest size of one part (S3's limit).
const MaxPartSize = 5 << 30

// MaxPartNumber is the highest part number; part numbers start at 1.
const MaxPartNumber = 10000

// Part describes one uploaded part of a multipart upload. ETag is opaque
// (for S3 a quoted hex digest); CompleteMultipart matches parts by Number and
// ETag, and ignores Size.
type Part struct {
	Number int
	ETag   string
	Size   int64
}

// Multiparter is an optional capability of a Store (check with a type
// assertion, `mp, ok := store.(blob.Multiparter)`): an object assembled from
// numbered parts uploaded separately, possibly out of order, by separate
// requests or processes, and made visible at once by CompleteMultipart.
//
// Both drivers in this repository implement it with S3's semantics:
//   - CreateMultipart starts an upload for key and returns its id; the
//     content type ("" means DefaultContentType) is that of the object
//     CompleteMultipart will create.
//   - UploadPart stores part number (1..MaxPartNumber) of size bytes, or of
//     unknown size if size is -1 (drivers stream it without holding the
//     whole part in memory; the s3 driver spools such a part to a temporary
//     file because S3 needs its length). Uploading a number again replaces
//     that part. The returned Part is what CompleteMultipart expects.
//   - ListParts returns the uploaded parts in part-number order.
//   - CompleteMultipart assembles the listed parts, in strictly ascending
//     number order (gaps are allowed, unlisted parts are discarded), into
//     key, replacing any existing object atomically: readers never see a
//     partial object. Every listed part but the last must be at least
//     MinPartSize. On ErrInvalidPart the upload stays open, so the caller
//     may retry with a corrected list or abort.
//   - AbortMultipart discards the upload and its parts.
//
// Until completed, an upload is invisible: Stat and Get of key report the
// previous object or ErrNotFound. Every method returns ErrInvalidKey
// (wrapped) for an invalid key and ErrUploadNotFound for an unknown,
// completed or aborted upload id, or one created for another key. Uploads
// that are neither completed nor aborted hold storage until the driver's
// cleanup (local: a day after their last part; S3: a bucket lifecycle rule)
// removes them.
type Multiparter interface {
	CreateMultipart(ctx context.Context, key, contentType string) (uploadID string, err error)
	UploadPart(ctx context.Context, key, uploadID string, number int, r io.Reader, size int64) (Part, error)
	ListParts(ctx context.Context, key, uploadID string) ([]Part, error)
	CompleteMultipart(ctx context.Context, key, uploadID string, parts []Part) (Info, error)
	AbortMultipart(ctx context.Context, key, uploadID string) error
}

// CheckPart returns nil if number is a valid part number and size (-1 for
// unknown) does not exceed MaxPartSize, else ErrInvalidPart wrapped with the
// upload id.
func CheckPart(uploadID string, number int, size int64) error {
	if number < 1 || number > MaxPartNumber {
		return fmt.Errorf("upload %s: part number %d outside [1, %d]: %w", uploadID, number, MaxPartNumber, ErrInvalidPart)
	}
	if size > MaxPartSize {
		return fmt.Errorf("upload %s: part %d: size %d over %d: %w", uploadID, number, size, int64(MaxPartSize), ErrInvalidPart)
	}
	return nil
}

// CheckCompleteParts returns nil if parts is a list CompleteMultipart may
// accept (not empty, valid numbers in strictly ascending order, each with an
// ETag), else ErrInvalidPart wrapped with the upload id. Whether the parts
// exist and respect MinPartSize is for the driver to check.
func CheckCompleteParts(uploadID string, parts []Part) error {
	if len(parts) == 0 {
		return fmt.Errorf("upload %s: no parts: %w", uploadID, ErrInvalidPart)
	}
	for i, p := range parts {
		if err := CheckPart(uploadID, p.Number, -1); err != nil {
			return err
		}
		if i > 0 && p.Number <= parts[i-1].Number {
			return fmt.Errorf("upload %s: part %d listed after part %d: %w", uploadID, p.Number, parts[i-1].Number, ErrInvalidPart)
		}
		if p.ETag == "" {
			return fmt.Errorf("upload %s: part %d has no ETag: %w", uploadID, p.Number, ErrInvalidPart)
		}
	}
	return nil
}
