package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// defaultQueriesLimit is how many queries `admin insights queries` prints
// without --limit.
const defaultQueriesLimit = 100

// jsonLines is a command's output of one compact JSON object a line.
type jsonLines []any

func (l jsonLines) encode(enc *json.Encoder) error {
	for _, v := range l {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	return nil
}

// setPlace adds or replaces a place posts may name in geo.place_id:
// ID COUNTRY [NAME]. Posts written from then on naming it count in its
// country for keyword insights.
func setPlace(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if len(o.Args) != 2 && len(o.Args) != 3 {
		return nil, fmt.Errorf("want ID COUNTRY [NAME], got %d arguments", len(o.Args))
	}
	p := storage.Place{ID: strings.TrimSpace(o.Args[0]), CountryCode: strings.ToUpper(o.Args[1])}
	if len(o.Args) == 3 {
		p.FullName = strings.TrimSpace(o.Args[2])
	}
	if p.ID == "" {
		return nil, errors.New("the place id must not be blank")
	}
	if !storage.IsCountryCode(p.CountryCode) {
		return nil, fmt.Errorf("country %q: want an ISO 3166-1 alpha-2 code such as US", o.Args[1])
	}
	if err := db.SetPlace(ctx, p); err != nil {
		return nil, err
	}
	return map[string]any{"place_id": p.ID, "country_code": p.CountryCode, "full_name": p.FullName}, nil
}

// insightQueries lists the keyword insights queries answered in the last
// --since, newest first, at most --limit, one a line.
func insightQueries(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if o.Since <= 0 {
		return nil, fmt.Errorf("--since %s: want a positive duration such as 24h", o.Since)
	}
	if o.Limit <= 0 {
		return nil, fmt.Errorf("--limit %d: want a positive number", o.Limit)
	}
	qs, err := db.InsightQueries(ctx, time.Now().Add(-o.Since), o.Limit)
	if err != nil {
		return nil, err
	}
	out := make(jsonLines, 0, len(qs))
	for _, q := range qs {
		out = append(out, renderInsightQuery(q))
	}
	return out, nil
}

func renderInsightQuery(q storage.InsightQueryLog) map[string]any {
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	return map[string]any{"id": ids.Format(q.ID), "created_at": stamp(q.CreatedAt), "app_id": ids.Format(q.AppID),
		"user_id": ids.Format(q.UserID), "account_id": q.AccountID, "granularity": q.Granularity, "keywords": q.Keywords,
		"negative_keywords": q.NegativeKeywords, "location": q.Location, "start_time": stamp(q.Start), "end_time": stamp(q.End),
		"buckets": q.Buckets, "related_keywords": q.RelatedKeywords, "total_volume": q.TotalVolume,
		"duration_ms": float64(q.Duration.Microseconds()) / 1000}
}
