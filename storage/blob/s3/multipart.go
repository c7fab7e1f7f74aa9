package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/aviary-dev/aviary/storage/blob"
)

var _ blob.Multiparter = (*Store)(nil)

// CreateMultipart starts an S3 multipart upload for key and returns its id.
func (s *Store) CreateMultipart(ctx context.Context, key, contentType string) (string, error) {
	if err := blob.CheckKey("create upload", key); err != nil {
		return "", err
	}
	id, err := s.createUpload(ctx, key, contentType)
	if err != nil {
		return "", fmt.Errorf("create upload for %s: %w", key, err)
	}
	return id, nil
}

func (s *Store) createUpload(ctx context.Context, key, contentType string) (string, error) {
	if contentType == "" {
		contentType = blob.DefaultContentType
	}
	out, err := s.api.CreateMultipartUpload(ctx, &awss3.CreateMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, ContentType: &contentType,
	})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.UploadId), nil
}

// UploadPart uploads part number of upload id. S3 needs each part's length
// up front: a part of unknown size (-1) is first spooled to a temporary file
// in os.TempDir (removed afterwards), so pass the size when it is known.
func (s *Store) UploadPart(ctx context.Context, key, id string, number int, r io.Reader, size int64) (blob.Part, error) {
	if err := blob.CheckKey("upload part", key); err != nil {
		return blob.Part{}, err
	}
	p, err := s.uploadPart(ctx, key, id, number, r, size)
	if err != nil {
		return blob.Part{}, fmt.Errorf("upload part %d of upload %s for %s: %w", number, id, key, uploadErr(err))
	}
	return p, nil
}

func (s *Store) uploadPart(ctx context.Context, key, id string, number int, r io.Reader, size int64) (blob.Part, error) {
	if err := blob.CheckPart(id, number, size); err != nil {
		return blob.Part{}, err
	}
	if err := checkUploadID(id); err != nil {
		return blob.Part{}, err
	}
	if size < 0 {
		f, n, err := spool(ctx, r)
		if err != nil {
			return blob.Part{}, err
		}
		defer removeSpool(f)
		r, size = f, n
	}
	return s.putPart(ctx, key, id, number, r, size)
}

// putPart sends part number, exactly size bytes of r.
func (s *Store) putPart(ctx context.Context, key, id string, number int, r io.Reader, size int64) (blob.Part, error) {
	out, err := s.api.UploadPart(ctx, &awss3.UploadPartInput{
		Bucket: &s.bucket, Key: &key, UploadId: &id, PartNumber: aws.Int32(int32(number)),
		Body: r, ContentLength: &size,
	}, unsignedPayload)
	if err != nil {
		return blob.Part{}, err
	}
	return blob.Part{Number: number, ETag: aws.ToString(out.ETag), Size: size}, nil
}

// spool copies r, at most blob.MaxPartSize bytes, into a temporary file
// and returns it rewound, with its length.
func spool(ctx context.Context, r io.Reader) (*os.File, int64, error) {
	f, err := os.CreateTemp("", "aviary-part-*")
	if err != nil {
		return nil, 0, err
	}
	n, err := io.Copy(f, io.LimitReader(ctxReader{ctx, r}, blob.MaxPartSize+1))
	if err == nil && n > blob.MaxPartSize {
		err = fmt.Errorf("part over %d bytes: %w", int64(blob.MaxPartSize), blob.ErrInvalidPart)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		removeSpool(f)
		return nil, 0, fmt.Errorf("spool part: %w", err)
	}
	return f, n, nil
}

func removeSpool(f *os.File) {
	f.Close()
	os.Remove(f.Name())
}

// ListParts returns the parts uploaded so far, in part-number order.
func (s *Store) ListParts(ctx context.Context, key, id string) ([]blob.Part, error) {
	if err := blob.CheckKey("list parts", key); err != nil {
		return nil, err
	}
	parts, err := s.listParts(ctx, key, id)
	if err != nil {
		return nil, fmt.Errorf("list parts of upload %s for %s: %w", id, key, uploadErr(err))
	}
	return parts, nil
}

func (s *Store) listParts(ctx context.Context, key, id string) ([]blob.Part, error) {
	if err := checkUploadID(id); err != nil {
		return nil, err
	}
	parts := []blob.Part{}
	pages := awss3.NewListPartsPaginator(s.api, &awss3.ListPartsInput{Bucket: &s.bucket, Key: &key, UploadId: &id})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, p := range out.Parts {
			parts = append(parts, blob.Part{Number: int(aws.ToInt32(p.PartNumber)), ETag: aws.ToString(p.ETag), Size: aws.ToInt64(p.Size)})
		}
	}
	slices.SortFunc(parts, func(a, b blob.Part) int { return a.Number - b.Number })
	return parts, nil
}

// CompleteMultipart has S3 assemble parts into key and describes the new
// object.
func (s *Store) CompleteMultipart(ctx context.Context, key, id string, parts []blob.Part) (blob.Info, error) {
	if err := blob.CheckKey("complete upload", key); err != nil {
		return blob.Info{}, err
	}
	err := blob.CheckCompleteParts(id, parts)
	if err == nil {
		err = s.completeUpload(ctx, key, id, parts)
	}
	if err != nil {
		return blob.Info{}, fmt.Errorf("complete upload %s for %s: %w", id, key, uploadErr(err))
	}
	return s.Stat(ctx, key)
}

func (s *Store) completeUpload(ctx context.Context, key, id string, parts []blob.Part) error {
	if err := checkUploadID(id); err != nil {
		return err
	}
	completed := make([]types.CompletedPart, len(parts))
	for i, p := range parts {
		completed[i] = types.CompletedPart{ETag: aws.String(p.ETag), PartNumber: aws.Int32(int32(p.Number))}
	}
	_, err := s.api.CompleteMultipartUpload(ctx, &awss3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: &id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: completed},
	})
	return err
}

// AbortMultipart discards upload id and its parts. S3 servers differ on
// aborting an unknown upload (AWS: NoSuchUpload, MinIO: success), so the
// upload's existence is checked first with a one-part ListParts, making
// ErrUploadNotFound reliable.
func (s *Store) AbortMultipart(ctx context.Context, key, id string) error {
	if err := blob.CheckKey("abort upload", key); err != nil {
		return err
	}
	err := s.checkUploadExists(ctx, key, id)
	if err == nil {
		err = s.abortUpload(ctx, key, id)
	}
	if err != nil {
		return fmt.Errorf("abort upload %s for %s: %w", id, key, uploadErr(err))
	}
	return nil
}

// checkUploadExists returns an error (NoSuchUpload for S3) unless upload id
// of key exists.
func (s *Store) checkUploadExists(ctx context.Context, key, id string) error {
	if err := checkUploadID(id); err != nil {
		return err
	}
	_, err := s.api.ListParts(ctx, &awss3.ListPartsInput{Bucket: &s.bucket, Key: &key, UploadId: &id, MaxParts: aws.Int32(1)})
	return err
}

func (s *Store) abortUpload(ctx context.Context, key, id string) error {
	_, err := s.api.AbortMultipartUpload(ctx, &awss3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: &id})
	return err
}

// checkUploadID returns blob.ErrUploadNotFound for ids no S3 server issues
// and some refuse with other errors: empty, or with a "." or ".." path
// segment (MinIO answers XMinioInvalidResourceName).
func checkUploadID(id string) error {
	if id == "" {
		return blob.ErrUploadNotFound
	}
	for _, seg := range strings.FieldsFunc(id, func(r rune) bool { return r == '/' || r == '\\' }) {
		if seg = strings.TrimSpace(seg); seg == "." || seg == ".." {
			return blob.ErrUploadNotFound
		}
	}
	return nil
}

// uploadErr marks S3's multipart errors with blob's sentinel errors,
// keeping err.
func uploadErr(err error) error {
	var noUpload *types.NoSuchUpload
	switch {
	case errors.As(err, &noUpload) || hasCode(err, "NoSuchUpload"):
		return fmt.Errorf("%w: %w", blob.ErrUploadNotFound, err)
	case hasCode(err, "InvalidPart", "InvalidPartOrder", "EntityTooSmall"):
		return fmt.Errorf("%w: %w", blob.ErrInvalidPart, err)
	}
	return err
}
