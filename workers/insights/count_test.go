package insights

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

func TestCounterDeltas(t *testing.T) {
	at := time.Date(2026, 11, 26, 9, 41, 0, 0, time.UTC)
	hour, day := at.Truncate(time.Hour), at.Truncate(24*time.Hour)
	h := func(term, country string) storage.TermHourKey {
		return storage.TermHourKey{Term: term, CountryCode: country, Hour: hour}
	}
	p := func(term, co string) storage.TermPairKey {
		return storage.TermPairKey{Term: term, CountryCode: "US", Day: day, CoTerm: co}
	}
	tests := []struct {
		name    string
		counter Counter
		changes []storage.InsightChange
		hours   map[storage.TermHourKey]int
		// pairs of a term with itself stand for its insight_term_days
		// bucket (the sampled posts holding it; "" all sampled posts).
		pairs map[storage.TermPairKey]int
	}{
		{
			name:    "one post: its terms, the all-posts term, its pairs without stopwords",
			counter: Counter{PairSample: 1},
			changes: []storage.InsightChange{{PostID: 1, Delta: 1, PostedAt: at, CountryCode: "US", Text: "The Go #golang release"}},
			hours:   map[storage.TermHourKey]int{h("", "US"): 1, h("the", "US"): 1, h("go", "US"): 1, h("#golang", "US"): 1, h("golang", "US"): 1, h("release", "US"): 1},
			pairs: map[storage.TermPairKey]int{p("", ""): 1,
				p("go", "go"): 1, p("#golang", "#golang"): 1, p("golang", "golang"): 1, p("release", "release"): 1,
				p("go", "#golang"): 1, p("go", "golang"): 1, p("go", "release"): 1,
				p("#golang", "go"): 1, p("#golang", "golang"): 1, p("#golang", "release"): 1,
				p("golang", "go"): 1, p("golang", "#golang"): 1, p("golang", "release"): 1,
				p("release", "go"): 1, p("release", "#golang"): 1, p("release", "golang"): 1},
		},
		{
			name:    "a post counted then removed adds nothing",
			counter: Counter{PairSample: 1},
			changes: []storage.InsightChange{
				{PostID: 2, Delta: 1, PostedAt: at, CountryCode: "", Text: "hello world"},
				{PostID: 2, Delta: -1, PostedAt: at, CountryCode: "", Text: "hello world"},
			},
			hours: map[storage.TermHourKey]int{h("", ""): 0, h("hello", ""): 0, h("world", ""): 0},
			pairs: map[storage.TermPairKey]int{
				{CountryCode: "", Day: day}:                0,
				{Term: "hello", Day: day, CoTerm: "hello"}: 0, {Term: "world", Day: day, CoTerm: "world"}: 0,
				{Term: "hello", Day: day, CoTerm: "world"}: 0, {Term: "world", Day: day, CoTerm: "hello"}: 0},
		},
		{
			name:    "pair terms bounded: the third term is paired with itself only",
			counter: Counter{PairSample: 1, PairTerms: 2},
			changes: []storage.InsightChange{{PostID: 3, Delta: 1, PostedAt: at, CountryCode: "US", Text: "alpha beta gamma"}},
			hours:   map[storage.TermHourKey]int{h("", "US"): 1, h("alpha", "US"): 1, h("beta", "US"): 1, h("gamma", "US"): 1},
			pairs: map[storage.TermPairKey]int{p("", ""): 1, p("alpha", "alpha"): 1, p("beta", "beta"): 1, p("gamma", "gamma"): 1,
				p("alpha", "beta"): 1, p("beta", "alpha"): 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.counter.Deltas(tt.changes)
			// Every bucket is counted in its country and worldwide.
			wantHours, wantPairs, wantDays := map[storage.TermHourKey]int{}, map[storage.TermPairKey]int{}, map[storage.TermDayKey]int{}
			for k, n := range tt.hours {
				wantHours[k] = n
				k.CountryCode = storage.AllCountries
				wantHours[k] = n
			}
			for k, n := range tt.pairs {
				for _, c := range []string{k.CountryCode, storage.AllCountries} {
					k.CountryCode = c
					if k.Term == k.CoTerm {
						wantDays[storage.TermDayKey{Term: k.Term, CountryCode: c, Day: k.Day}] = n
					} else {
						wantPairs[k] = n
					}
				}
			}
			if !equalMaps(d.Days, wantDays) {
				t.Errorf("days = %v, want %v", d.Days, wantDays)
			}
			if !equalMaps(d.Hours, wantHours) {
				t.Errorf("hours = %v, want %v", d.Hours, wantHours)
			}
			if !equalMaps(d.Pairs, wantPairs) {
				t.Errorf("pairs = %v, want %v", d.Pairs, wantPairs)
			}
		})
	}
}

func TestCounterSampled(t *testing.T) {
	c := Counter{PairSample: 16}
	n := 0
	for id := int64(1); id <= 16000; id++ {
		if c.Sampled(id << 22) {
			n++
		}
	}
	// Ids whose low bits are all zero (one post per millisecond) must
	// still be sampled about one in 16.
	if n < 800 || n > 1200 {
		t.Errorf("sampled %d of 16000 ids, want about 1000", n)
	}
	if !(Counter{PairSample: 1}).Sampled(12345) {
		t.Error("PairSample 1 must sample every post")
	}
}

func equalMaps[K comparable](a, b map[K]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
