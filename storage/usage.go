package storage

import "time"

// UsageCounts are what an app used: posts read (each post of a response's
// data and includes.tweets), posts written, users read, and the credits
// those cost (docs/usage-and-credits.md).
type UsageCounts struct {
	PostsRead    int64
	PostsWritten int64
	UsersRead    int64
	CreditsSpent int64
}

// Add returns c plus d.
func (c UsageCounts) Add(d UsageCounts) UsageCounts {
	return UsageCounts{PostsRead: c.PostsRead + d.PostsRead, PostsWritten: c.PostsWritten + d.PostsWritten,
		UsersRead: c.UsersRead + d.UsersRead, CreditsSpent: c.CreditsSpent + d.CreditsSpent}
}

// Zero reports whether c counts nothing.
func (c UsageCounts) Zero() bool { return c == UsageCounts{} }

// UsageDay is one app's usage on one UTC day.
type UsageDay struct {
	AppID int64
	Day   time.Time // midnight UTC
	UsageCounts
}

// UsageSettings are one app's caps (nil: the server's default) and the
// credits added to it over its lifetime.
type UsageSettings struct {
	AppID        int64
	ReadCap      *int64
	WriteCap     *int64
	CreditsAdded int64
}
