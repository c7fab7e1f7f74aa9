package s3

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// isNotFound reports whether err is S3's "no such key" (GetObject) or a
// bodiless 404 (HeadObject).
func isNotFound(err error) bool {
	var noKey *types.NoSuchKey
	var notFound *types.NotFound
	if errors.As(err, &noKey) || errors.As(err, &notFound) {
		return true
	}
	return hasCode(err, "NoSuchKey", "NotFound")
}

// isNoBucket reports whether err says the bucket does not exist.
func isNoBucket(err error) bool {
	var noBucket *types.NoSuchBucket
	var notFound *types.NotFound
	return errors.As(err, &noBucket) || errors.As(err, &notFound) || hasCode(err, "NoSuchBucket", "NotFound")
}

// hasCode reports whether err is an API error with one of codes (some
// S3-compatible servers' errors do not map to the typed errors).
func hasCode(err error, codes ...string) bool {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	for _, c := range codes {
		if apiErr.ErrorCode() == c {
			return true
		}
	}
	return false
}
