// Package insights keeps the keyword insights aggregates (docs/insights.md):
// it applies the change log that the posts table writes (posts that start
// or stop counting) to the term x country x hour counts and the sampled
// term pairs, one transaction per batch.
package insights

import (
	"encoding/binary"
	"hash/fnv"
	"time"

	"github.com/aviary-dev/aviary/domain/posttext"
	"github.com/aviary-dev/aviary/storage"
)

// Defaults of a Counter.
const (
	// DefaultPairSample pairs one post in 16: enough for related keywords,
	// a sixteenth of the writes.
	DefaultPairSample = 16
	// DefaultPairTerms is how many of a sampled post's terms are paired
	// with each other.
	DefaultPairTerms = 10
)

// Counter turns changes into what they add to the aggregates.
type Counter struct {
	// PairSample: the posts whose id hashes to 0 modulo PairSample feed
	// the pairs (1: every post). Changing it leaves the pairs of posts
	// counted before approximate until they are rebuilt.
	PairSample uint64
	// PairTerms bounds the paired terms of a post (its first ones that are
	// not stopwords).
	PairTerms int
}

// Deltas adds up what changes make, for ApplyInsightChanges.
func (c Counter) Deltas(changes []storage.InsightChange) storage.InsightDeltas {
	d := storage.InsightDeltas{
		Hours: make(map[storage.TermHourKey]int, len(changes)*16),
		Pairs: make(map[storage.TermPairKey]int),
		Days:  make(map[storage.TermDayKey]int),
	}
	for _, ch := range changes {
		c.add(d, ch)
	}
	return d
}

// add counts ch under its post's country and under storage.AllCountries.
func (c Counter) add(d storage.InsightDeltas, ch storage.InsightChange) {
	hour := ch.PostedAt.UTC().Truncate(time.Hour)
	terms := posttext.KeywordTerms(ch.Text)
	countries := [2]string{ch.CountryCode, storage.AllCountries}
	for _, country := range countries {
		d.Hours[storage.TermHourKey{Term: "", CountryCode: country, Hour: hour}] += ch.Delta
		for _, t := range terms {
			d.Hours[storage.TermHourKey{Term: t, CountryCode: country, Hour: hour}] += ch.Delta
		}
	}
	if !c.Sampled(ch.PostID) {
		return
	}
	day := ch.PostedAt.UTC().Truncate(24 * time.Hour)
	pair := func(t, u string) {
		for _, country := range countries {
			d.Pairs[storage.TermPairKey{Term: t, CountryCode: country, Day: day, CoTerm: u}] += ch.Delta
		}
	}
	sampled := func(t string) {
		for _, country := range countries {
			d.Days[storage.TermDayKey{Term: t, CountryCode: country, Day: day}] += ch.Delta
		}
	}
	sampled("")
	var paired []string
	for _, t := range terms {
		if posttext.IsStopword(t) {
			continue
		}
		sampled(t)
		if len(paired) < c.pairTerms() {
			paired = append(paired, t)
		}
	}
	for _, t := range paired {
		for _, u := range paired {
			if t != u {
				pair(t, u)
			}
		}
	}
}

// Sampled reports whether post feeds the pairs.
func (c Counter) Sampled(postID int64) bool {
	if c.PairSample <= 1 {
		return true
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(postID))
	h := fnv.New64a()
	h.Write(b[:])
	return h.Sum64()%c.PairSample == 0
}

func (c Counter) pairTerms() int {
	if c.PairTerms <= 0 {
		return DefaultPairTerms
	}
	return c.PairTerms
}
