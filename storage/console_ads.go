package storage

import "time"

// ConsoleAdAccount is an ads account as the developer console lists it:
// the account and its owner's username.
type ConsoleAdAccount struct {
	AdAccount
	OwnerUsername string
}

// ConsoleAudienceBatch is a custom audience users batch as the console's
// batch history shows it: the batch, why it failed, when it settled and
// what applying it did to the audience's members (nil until it is applied,
// and for batches applied before migration 0048 recorded it).
type ConsoleAudienceBatch struct {
	AudienceBatch
	Failure        *string
	SettledAt      *time.Time
	MembersAdded   *int64
	MembersRemoved *int64
	MembersMerged  *int64
}

// ConsoleCatalog is a product catalog as the console lists it: the
// catalog, its owner's username and how many products it holds, how many
// of them carry validation errors, and how many await their image check.
type ConsoleCatalog struct {
	ProductCatalog
	OwnerUsername string
	Products      int64
	WithErrors    int64
	Pending       int64
}
