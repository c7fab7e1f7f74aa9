package webhooks

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/aviary-dev/aviary/domain/faults"
)

type fakeFaults struct {
	kind faults.Kind
	err  error
	app  int64
}

func (f *fakeFaults) CRCFault(_ context.Context, appID int64) (faults.Kind, error) {
	f.app = appID
	return f.kind, f.err
}

// refusingDoer answers nothing: a check that reaches it fails to connect.
type refusingDoer struct{ calls int }

func (d *refusingDoer) Do(*http.Request) (*http.Response, error) {
	d.calls++
	return nil, errors.New("connection refused")
}

func TestCheckWithFaults(t *testing.T) {
	tests := []struct {
		name      string
		faults    *fakeFaults
		failure   string
		permanent bool
		requested bool
	}{
		{"no faults", nil, "the URL could not be reached", false, true},
		{"no fault set", &fakeFaults{}, "the URL could not be reached", false, true},
		{"failure", &fakeFaults{kind: faults.CRCFailure}, "the response_token is wrong", true, false},
		{"timeout", &fakeFaults{kind: faults.CRCTimeout}, "no answer within " + CRCTimeout.String(), false, false},
		{"faults unreadable", &fakeFaults{kind: faults.CRCFailure, err: errors.New("down")}, "the URL could not be reached", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &refusingDoer{}
			var f Faults
			if tt.faults != nil {
				f = tt.faults
			}
			o := CheckWithFaults(context.Background(), f, 42, d, "https://example.com/hook", "secret")
			if o.OK || o.Failure != tt.failure || o.Permanent != tt.permanent || (d.calls > 0) != tt.requested {
				t.Errorf("outcome %+v, requests %d", o, d.calls)
			}
			if tt.faults != nil && tt.faults.app != 42 {
				t.Errorf("asked for app %d", tt.faults.app)
			}
		})
	}
}
