package webhooks

import (
	"context"
	"fmt"

	"github.com/aviary-dev/aviary/domain/faults"
)

// Faults decides the injected faults of CRC checks (docs/faults.md;
// storage/faultsredis.Store): the kind the next CRC check of a webhook of
// appID is to suffer (faults.CRCFailure, faults.CRCTimeout), "" for none.
type Faults interface {
	CRCFault(ctx context.Context, appID int64) (faults.Kind, error)
}

// CheckWithFaults is Check, unless f injects a fault into this check of
// appID's webhook: then the check is judged as the fault says without a
// request (a failure: a wrong response_token, permanent; a timeout: no
// answer within CRCTimeout, transient, judged at once). A nil f, or one
// that can not be read, injects nothing.
func CheckWithFaults(ctx context.Context, f Faults, appID int64, d Doer, rawURL, consumerSecret string) Outcome {
	if f != nil {
		kind, err := f.CRCFault(ctx, appID)
		switch {
		case err != nil: // the faults are unavailable: check for real
		case kind == faults.CRCFailure:
			return Outcome{Failure: "the response_token is wrong", Permanent: true}
		case kind == faults.CRCTimeout:
			return Outcome{Failure: fmt.Sprintf("no answer within %s", CRCTimeout)}
		}
	}
	return Check(ctx, d, rawURL, consumerSecret)
}
