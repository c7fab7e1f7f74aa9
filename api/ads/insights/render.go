package insights

// resultJSON is the keyword insight result of the reference: the related
// keywords and the volume per bucket of the input keywords.
type resultJSON struct {
	RelatedKeywords []string `json:"related_keywords"`
	TweetVolume     []int64  `json:"tweet_volume"`
}

// render is the result, arrays never null.
func render(related []string, volumes []int64) resultJSON {
	if related == nil {
		related = []string{}
	}
	if volumes == nil {
		volumes = []int64{}
	}
	return resultJSON{RelatedKeywords: related, TweetVolume: volumes}
}
