package storage

import (
	"errors"
	"time"
)

// AudiencePermissionLevels are the permission_level values of a grant.
var AudiencePermissionLevels = []string{PermissionReadOnly, PermissionReadWrite}

// Audience sharing errors (see docs/ads-audience-sharing.md).
var (
	// ErrAudienceNotFound means the custom audience is missing, deleted, or
	// not usable by the account (neither owned nor granted by a live
	// permission).
	ErrAudienceNotFound = errors.New("storage: custom audience not found")
	// ErrGrantedAccountNotFound means the account to share with does not
	// exist, is deleted, or lives on the other side (sandbox/production).
	ErrGrantedAccountNotFound = errors.New("storage: granted account not found")
	// ErrGrantToOwner means the account to share with owns the audience.
	ErrGrantToOwner = errors.New("storage: the audience's owner cannot be granted it")
	// ErrGrantExists means the account already has a live grant.
	ErrGrantExists = errors.New("storage: the account already has a permission on the audience")
	// ErrGrantOutsideBusiness means the accounts are of different businesses
	// and the owner lacks FeatureShareAudienceOutsideBusiness.
	ErrGrantOutsideBusiness = errors.New("storage: sharing outside the business is not allowed")
)

// AudiencePermission is a grant of a custom audience to another account
// (the /5/ tailored audience permission). Revoking soft-deletes it.
type AudiencePermission struct {
	ID               string
	AudienceID       string
	GrantedAccountID string
	PermissionLevel  string
	CreatedAt        time.Time
	UpdatedAt        time.Time
	Deleted          bool
}

// NewAudiencePermission is a grant the owner account makes.
type NewAudiencePermission struct {
	OwnerAccountID   string
	AudienceID       string
	GrantedAccountID string
	PermissionLevel  string
}

// AudiencePermissionFilter narrows the live grants of one audience of its
// owner account.
type AudiencePermissionFilter struct {
	OwnerAccountID    string
	AudienceID        string
	GrantedAccountIDs []string
	PermissionIDs     []string
}

// TargetedLineItem is a line item targeting an audience through a live
// targeting criterion; Servable is an ACTIVE line item of an ACTIVE
// campaign.
type TargetedLineItem struct {
	ID       string
	Name     *string
	Servable bool
}

// TargetedCampaign is a campaign with its line items that target an
// audience.
type TargetedCampaign struct {
	ID        string
	Name      string
	LineItems []TargetedLineItem
}

// TargetedFilter selects the account's campaigns targeting an audience;
// OnlyServable leaves out line items that are not servable (and campaigns
// left without any).
type TargetedFilter struct {
	AccountID    string
	AudienceID   string
	OnlyServable bool
}
