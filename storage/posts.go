package storage

import "time"

// Post is a post ("tweet") with its author.
type Post struct {
	ID              int64
	AuthorID        int64
	AppID           int64
	Text            string
	PaidPartnership bool
	MediaIDs        []int64 // attached media, in order
	CreatedAt       time.Time
	DeletedAt       *time.Time
}

// PostStatus is what compliance needs to know about one post id.
type PostStatus struct {
	ID        int64
	CreatedAt time.Time
	DeletedAt *time.Time
	Author    User
}
