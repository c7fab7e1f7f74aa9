package activity_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/workers/activity"
)

func collect(rows pgx.Rows) ([]int64, error) {
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}

// streamLog runs the stream sink once over the log's first 500 events and
// returns what it published.
func streamLog(ctx context.Context, t *testing.T, db *postgres.DB) []events.Activity {
	t.Helper()
	pub := &publisher{}
	sink := &activity.Sink{Mode: activity.Stream, Store: db, Posts: &render.Hydrator{Store: db}, Bus: pub}
	batch, err := db.EventsAfter(ctx, 0, 500)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Handle(ctx, batch); err != nil {
		t.Fatal(err)
	}
	return pub.got
}
