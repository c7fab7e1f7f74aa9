package storage

import "time"

// NewsStory is a cluster of recent posts around spiking terms, built and
// refreshed by the news:refresh worker (docs/news.md).
type NewsStory struct {
	ID int64
	// LeadTerm is the spiking term the story was last built around (a
	// posttext.KeywordTerms term: word, "#tag", "$tag" or "@name").
	LeadTerm string
	// Keywords are the story's terms, the lead first.
	Keywords []string
	Name     string
	Summary  string
	Hook     string
	Category string
	Contexts NewsContexts
	// PostIDs are the cluster posts shown, the most engaged first (at most
	// NewsClusterResults).
	PostIDs []int64
	// Posts is how many posts the story covered when it was refreshed (the
	// lead term's posts of the last NewsRefreshWindow).
	Posts int
	// Sources are every post the story was built from (its cluster, not
	// only PostIDs) and SourceAuthors their authors: when one of them stops
	// being visible the story is stale (docs/derived-data.md).
	Sources       []int64
	SourceAuthors []int64
	// Lead are the lead term's counts when the story was built, kept so a
	// rebuild from fewer sources can state them less the posts that went.
	Lead SpikingTerm
	// StaleAt is when a source stopped being visible (nil: none did since
	// the build); a stale story is not served until it is rebuilt.
	StaleAt *time.Time
	// WithdrawnAt is when the story was withdrawn: none of its sources was
	// visible any more. A withdrawn story is never served again.
	WithdrawnAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewsSource is one of a story's source posts that still exists, and
// whether anyone may see it (live, the latest version, by a public author).
type NewsSource struct {
	Post    Post
	Visible bool
}

// NewsCategory is the category of every story.
const NewsCategory = "News"

// NewsRefreshWindow is how recently a story must have been updated to be
// refreshed in place by a new build around its lead term or one of its
// keywords; after it, the term starts a new story.
const NewsRefreshWindow = 24 * time.Hour

// NewsClusterResults bounds a story's PostIDs.
const NewsClusterResults = 10

// NewsContexts are a story's contexts, as the platform shapes them. Every
// list is present (empty rather than null).
type NewsContexts struct {
	Topics   []string     `json:"topics"`
	Entities NewsEntities `json:"entities"`
	Finance  NewsFinance  `json:"finance"`
	Sports   NewsSports   `json:"sports"`
}

// NewsEntities are the named entities of a story.
type NewsEntities struct {
	People        []string `json:"people"`
	Organizations []string `json:"organizations"`
	Places        []string `json:"places"`
	Products      []string `json:"products"`
	Events        []string `json:"events"`
}

// NewsFinance are a story's tickers (upper-case cashtags, no sign).
type NewsFinance struct {
	Tickers []string `json:"tickers"`
}

// NewsSports are a story's sports teams.
type NewsSports struct {
	Teams []string `json:"teams"`
}

// Normalized returns c with every nil list made empty, so it renders as
// [] rather than null.
func (c NewsContexts) Normalized() NewsContexts {
	for _, l := range []*[]string{&c.Topics, &c.Entities.People, &c.Entities.Organizations, &c.Entities.Places,
		&c.Entities.Products, &c.Entities.Events, &c.Finance.Tickers, &c.Sports.Teams} {
		if *l == nil {
			*l = []string{}
		}
	}
	return c
}

// NewsSearch asks for the stories whose name, summary or keywords hold
// every one of Words (lower-case words, no signs), updated at or after
// Since, newest first.
type NewsSearch struct {
	Words []string
	Since time.Time
	Limit int
}

// SpikeQuery asks for the terms of insight_term_hours (every country
// together) whose posts of the last hour spike at Now (docs/news.md):
// LastHour >= MinPosts and (LastHour+1)/(Baseline+1) >= MinRatio, the
// strongest (LastHour - Baseline) first, at most Limit.
type SpikeQuery struct {
	Now      time.Time
	MinPosts int
	MinRatio float64
	Limit    int
}

// SpikingTerm is one term's counts at a SpikeQuery's Now.
type SpikingTerm struct {
	Term string
	// LastHour estimates the posts of the 60 minutes before Now: the
	// current hour's bucket plus the share of the previous hour's bucket
	// that lies within them.
	LastHour float64
	// Baseline is the hourly average of the 24 hours before the previous
	// hour.
	Baseline float64
	// Day is the posts of the last 24 hourly buckets (the current one
	// included).
	Day int
}

// Ratio is (LastHour+1)/(Baseline+1), the spike's strength relative to
// the term's usual rate.
func (s SpikingTerm) Ratio() float64 { return (s.LastHour + 1) / (s.Baseline + 1) }

// ClusterQuery asks for up to Limit live original posts of visible
// authors, created at or after Since, whose text holds Term, newest first.
type ClusterQuery struct {
	Term  string
	Since time.Time
	Limit int
}
