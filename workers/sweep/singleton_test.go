package sweep

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/hibiken/asynq"
)

type removed []string

func (r *removed) DeleteTask(queue, id string) error {
	*r = append(*r, queue+"/"+id)
	return nil
}

// TestSingleton: due only while Pending says so (always without it), the
// same work every time, an archived task removed.
func TestSingleton(t *testing.T) {
	ctx := context.Background()
	pending, failing := false, false
	var gone removed
	work := &Work{Task: asynq.NewTask("test:one", nil), Queue: "q", TaskID: "one"}
	s := &Singleton{Label: "one", Tasks: &gone, Work: func(time.Time) *Work { return work },
		Pending: func(context.Context) (bool, error) {
			if failing {
				return false, errors.New("down")
			}
			return pending, nil
		}}
	tests := []struct {
		name             string
		pending, failing bool
		want             []string
		wantErr          bool
	}{
		{name: "nothing pending", want: nil},
		{name: "pending", pending: true, want: []string{"one"}},
		{name: "store down", failing: true, wantErr: true},
	}
	for _, tt := range tests {
		pending, failing = tt.pending, tt.failing
		got, err := s.Due(ctx, time.Now(), 10)
		if (err != nil) != tt.wantErr || !slices.Equal(got, tt.want) {
			t.Errorf("%s: Due = %v, %v; want %v (error %v)", tt.name, got, err, tt.want, tt.wantErr)
		}
	}
	if w, _ := s.Check(ctx, "one", time.Now()); w != work {
		t.Errorf("Check = %v", w)
	}
	always := &Singleton{Label: "always", Work: s.Work}
	if got, _ := always.Due(ctx, time.Now(), 10); !slices.Equal(got, []string{"always"}) {
		t.Errorf("without Pending: Due = %v", got)
	}
	if err := s.Abandoned(ctx, "one", &asynq.TaskInfo{Queue: "q", ID: "one"}, time.Now()); err != nil || !slices.Equal(gone, removed{"q/one"}) {
		t.Errorf("Abandoned: %v, removed %v", err, gone)
	}
}
