package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
)

// appendNewsNew appends the news.new event of story s, created in tx
// (docs/activity.md, "Where events come from"). A story created stale (a
// source stopped being visible while it was built) is not served, so it
// is not announced either.
func appendNewsNew(ctx context.Context, tx pgx.Tx, s storage.NewsStory) error {
	if s.StaleAt != nil {
		return nil
	}
	contexts, err := json.Marshal(s.Contexts)
	if err != nil {
		return fmt.Errorf("encode the contexts of story %d: %w", s.ID, err)
	}
	return appendEvents(ctx, tx, newEvent{typ: events.NewsNew, subject: s.ID, payload: events.NewsStory{
		ID: s.ID, Name: s.Name, Summary: s.Summary, Hook: s.Hook, Category: s.Category, Contexts: contexts,
		PostIDs: nonNil(s.PostIDs), UpdatedAt: s.UpdatedAt}})
}
