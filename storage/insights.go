package storage

import (
	"context"
	"time"
)

// InsightChange is one row of the insights change log: a post that started
// (Delta 1) or stopped (Delta -1) counting, with the text and country it
// counted with (docs/insights.md).
type InsightChange struct {
	Seq         int64
	PostID      int64
	Delta       int
	PostedAt    time.Time
	CountryCode string
	Text        string
	RecordedAt  time.Time
}

// AllCountries is the country of the aggregates' worldwide rows: every
// change is counted under its post's country and under AllCountries, so a
// worldwide question reads as few rows as a one-country one.
const AllCountries = "*"

// TermHourKey names one bucket of insight_term_hours.
type TermHourKey struct {
	Term        string
	CountryCode string
	Hour        time.Time
}

// TermPairKey names one bucket of insight_term_pairs.
type TermPairKey struct {
	Term        string
	CountryCode string
	Day         time.Time // midnight UTC
	CoTerm      string
}

// TermDayKey names one bucket of insight_term_days.
type TermDayKey struct {
	Term        string
	CountryCode string
	Day         time.Time // midnight UTC
}

// InsightDeltas are what a batch of changes adds to the aggregates.
type InsightDeltas struct {
	Hours map[TermHourKey]int
	Pairs map[TermPairKey]int
	Days  map[TermDayKey]int
}

// InsightBatch is the outcome of applying one batch of changes.
type InsightBatch struct {
	Changes int
	// Oldest is the earliest RecordedAt of the batch: now minus Oldest is
	// how far behind the aggregates were.
	Oldest time.Time
	// Busy reports that another worker was applying a batch: nothing was
	// done.
	Busy bool
}

// InsightQuery is a keyword insights question over the aggregates.
type InsightQuery struct {
	Keywords         []string // normalized terms (posttext.NormalizeKeyword)
	NegativeKeywords []string
	CountryCode      string // "" for every country (the AllCountries rows)
	Start, End       time.Time
	Granularity      time.Duration // time.Hour or 24 * time.Hour
}

// InsightQueryLog records one answered keyword insights query.
type InsightQueryLog struct {
	ID               int64
	AppID, UserID    int64
	AccountID        string
	Granularity      string
	Keywords         []string
	NegativeKeywords []string
	Location         string
	Start, End       time.Time
	Buckets          int
	RelatedKeywords  int
	TotalVolume      int64
	Duration         time.Duration
	CreatedAt        time.Time
}

// Place is a place posts may name in geo.place_id.
type Place struct {
	ID          string
	CountryCode string
	FullName    string
}

// InsightApply is one batch of the change log applied to the aggregates.
type InsightApply struct {
	// Limit is the most changes taken.
	Limit int
	// Compute turns the changes into what they add to the aggregates.
	Compute func(changes []InsightChange) InsightDeltas
	// AfterWrite, if set, runs inside the transaction after the aggregates
	// and the log are written, before the commit; an error rolls all of it
	// back (tests use it to stand for a worker dying there).
	AfterWrite func(ctx context.Context) error
}
