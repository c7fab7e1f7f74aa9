package media

import (
	"context"
	"errors"
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

// oneFault fails the first upload of app it is asked about.
type oneFault struct {
	app  int64
	left int
	err  error
}

func (f *oneFault) MediaFault(_ context.Context, appID int64) (bool, error) {
	if f.err != nil {
		return false, f.err
	}
	if appID != f.app || f.left == 0 {
		return false, nil
	}
	f.left--
	return true, nil
}

// TestInjectedMediaFailure: a media fault fails the next upload of its app
// with InvalidMedia (not retried); the next upload is processed; faults
// that can not be read inject nothing.
func TestInjectedMediaFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	png := encodeImage(t, "png", 4, 4)
	first := e.record(t, upload{mediaType: "image/png", data: png, finalize: true})
	second := e.record(t, upload{mediaType: "image/png", data: png, finalize: true})
	third := e.record(t, upload{mediaType: "image/png", data: png, finalize: true})
	p, _ := e.processor(t, nil)
	p.Faults = &oneFault{app: first.AppID, left: 1}
	err := process(t, p, first.ID)
	e.wantFailed(t, err, first.ID, storage.MediaErrorInvalidMedia, ErrorNameInvalidMedia, "an injected fault")
	tests := []struct {
		name   string
		faults Faults
		id     int64
	}{
		{"the fault is used up", p.Faults, second.ID},
		{"faults unreadable", &oneFault{app: first.AppID, left: 1, err: errors.New("down")}, third.ID},
	}
	for _, tc := range tests {
		p.Faults = tc.faults
		if err := process(t, p, tc.id); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := e.load(t, tc.id); got.State != storage.MediaSucceeded {
			t.Errorf("%s: media is %s", tc.name, got.State)
		}
	}
}
