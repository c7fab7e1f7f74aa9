package storage

import "time"

// AdAccount is an advertising account owned by a user.
type AdAccount struct {
	ID             string
	Name           string
	UserID         int64
	Timezone       string
	ApprovalStatus string
	IndustryType   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Deleted        bool
}
