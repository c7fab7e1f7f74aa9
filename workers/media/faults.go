package media

import (
	"context"
	"log/slog"

	"github.com/aviary-dev/aviary/storage"
)

// Faults decides injected media failures (docs/faults.md;
// storage/faultsredis.Store): whether the upload of appID being processed
// now is to fail.
type Faults interface {
	MediaFault(ctx context.Context, appID int64) (bool, error)
}

// injected is the failure a fault injects into m's processing, nil when
// none does (or the faults can not be read: m is processed).
func (p *Processor) injected(ctx context.Context, log *slog.Logger, m storage.Media) *clientError {
	if p.Faults == nil {
		return nil
	}
	hit, err := p.Faults.MediaFault(ctx, m.AppID)
	if err != nil {
		log.WarnContext(ctx, "media: reading the faults failed; processing", "err", err)
		return nil
	}
	if !hit {
		return nil
	}
	return &clientError{code: storage.MediaErrorInvalidMedia, message: "The media could not be processed (an injected fault)."}
}
