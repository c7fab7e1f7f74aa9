package catalogs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // accepted formats
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net"
	"net/http"

	_ "golang.org/x/image/bmp" // recognised, refused with rule "format"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/aviary-dev/aviary/internal/outbound"
)

// UserAgent names the image check to the servers it reaches.
const UserAgent = "Aviary-ImageCheck/1.0"

// acceptImages is the Accept header of an image fetch.
var acceptImages = http.Header{"Accept": {"image/*"}, "User-Agent": {UserAgent}}

// DefaultMinSide is the least width and height of a product image.
const DefaultMinSide = 500

// Rules of the image check errors (the error item's "rule").
const (
	RuleRefusedAddress   = "refused_address"
	RuleInvalidURL       = "invalid_url"
	RuleUnreachable      = "unreachable"
	RuleTooManyRedirects = "too_many_redirects"
	RuleTimeout          = "timeout"
	RuleTooLarge         = "too_large"
	RuleNotAnImage       = "not_an_image"
	RuleFormat           = "format"
	RuleTooSmall         = "too_small"
)

// acceptedFormats are the image.DecodeConfig format names a product image
// may have: JPG, GIF, WEBP or PNG.
var acceptedFormats = map[string]string{"jpeg": "JPG", "gif": "GIF", "webp": "WEBP", "png": "PNG"}

// Failure is why one image failed its check.
type Failure struct {
	Rule    string
	Message string
}

func (f *Failure) Error() string { return f.Rule + ": " + f.Message }

// Checker fetches an image and checks it: an accepted format, at least
// MinSide pixels each way, at most the fetcher's byte cap.
type Checker struct {
	// Fetcher is the guarded client (internal/outbound) images are
	// fetched through.
	Fetcher *outbound.Client
	// MinSide is the least width and height (default DefaultMinSide).
	MinSide int
}

func (c *Checker) minSide() int {
	if c.MinSide > 0 {
		return c.MinSide
	}
	return DefaultMinSide
}

// Check checks the image at rawURL: nil if it passes. Only the header is
// decoded; the rest of the body is read (and discarded) to enforce the byte
// cap.
func (c *Checker) Check(ctx context.Context, rawURL string) *Failure {
	body, err := c.Fetcher.Open(ctx, rawURL, acceptImages)
	if err != nil {
		return c.fetchFailure(err)
	}
	defer body.Close()
	cfg, format, decodeErr := image.DecodeConfig(bufio.NewReaderSize(body, 32<<10))
	_, _ = io.Copy(io.Discard, body) // the error, if any, is kept by body
	if err := body.Err(); err != nil {
		return c.fetchFailure(err)
	}
	return c.judge(cfg, format, decodeErr)
}

// judge checks the decoded header.
func (c *Checker) judge(cfg image.Config, format string, decodeErr error) *Failure {
	if errors.Is(decodeErr, image.ErrFormat) {
		return &Failure{RuleNotAnImage, "The file is not an image (JPG, GIF, WEBP or PNG)."}
	}
	if decodeErr != nil {
		return &Failure{RuleNotAnImage, fmt.Sprintf("The file is not a readable %s image.", formatName(format))}
	}
	if _, ok := acceptedFormats[format]; !ok {
		return &Failure{RuleFormat, fmt.Sprintf("The image is %s; it must be JPG, GIF, WEBP or PNG.", formatName(format))}
	}
	if min := c.minSide(); cfg.Width < min || cfg.Height < min {
		return &Failure{RuleTooSmall, fmt.Sprintf("The image is %dx%d px; it must be at least %dx%d px.", cfg.Width, cfg.Height, min, min)}
	}
	return nil
}

func formatName(format string) string {
	if name, ok := acceptedFormats[format]; ok {
		return name
	}
	if format == "" {
		return "an unknown format"
	}
	return format
}

// fetchFailure turns a fetch or body error into its rule.
func (c *Checker) fetchFailure(err error) *Failure {
	var refused *outbound.RefusedAddressError
	var netErr net.Error
	var status *outbound.StatusError
	switch {
	case errors.As(err, &refused) && refused.Named():
		// A name resolving inward answers as a name that does not resolve:
		// neither the address nor that the name exists is revealed.
		return unreachable()
	case errors.As(err, &refused):
		return &Failure{RuleRefusedAddress, "The image URL's address is not a public address."}
	case errors.Is(err, outbound.ErrTooLarge):
		return &Failure{RuleTooLarge, fmt.Sprintf("The image is larger than %d bytes.", c.Fetcher.MaxBytes())}
	case errors.Is(err, outbound.ErrScheme):
		return &Failure{RuleInvalidURL, "The image URL must be an http or https URL."}
	case errors.Is(err, outbound.ErrTooManyRedirects):
		return &Failure{RuleTooManyRedirects, fmt.Sprintf("The image URL redirects more than %d times.", c.Fetcher.MaxRedirects())}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return &Failure{RuleTimeout, fmt.Sprintf("The image could not be fetched within %s.", c.Fetcher.Timeout())}
	case errors.As(err, &status):
		return &Failure{RuleUnreachable, fmt.Sprintf("The image could not be fetched: the server answered HTTP status %d.", status.Code)}
	}
	return unreachable()
}

// unreachable is the failure of an image whose server cannot be reached.
func unreachable() *Failure {
	return &Failure{RuleUnreachable, "The image could not be fetched: the server could not be reached."}
}
