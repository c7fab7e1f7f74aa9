package storage

import "time"

// Account media creative types (creative_type).
const (
	CreativeBanner                      = "BANNER"
	CreativeBannerTablet                = "BANNER_TABLET"
	CreativeInterstitial                = "INTERSTITIAL"
	CreativeInterstitialLandscape       = "INTERSTITIAL_LANDSCAPE"
	CreativeInterstitialLandscapeTablet = "INTERSTITIAL_LANDSCAPE_TABLET"
	CreativeInterstitialTablet          = "INTERSTITIAL_TABLET"
	CreativeMediumRectangle             = "MEDIUM_RECTANGLE"
	CreativePreroll                     = "PREROLL"
	CreativeVASTPreroll                 = "VAST_PREROLL"
)

// CreativeTypes are the values of an account media's creative_type.
var CreativeTypes = []string{CreativeBanner, CreativeBannerTablet, CreativeInterstitial, CreativeInterstitialLandscape,
	CreativeInterstitialLandscapeTablet, CreativeInterstitialTablet, CreativeMediumRectangle, CreativePreroll, CreativeVASTPreroll}

// AccountMedia is a media asset of an ads account that media creatives
// promote. A PREROLL account media is made when an AMPLIFY_VIDEO is added
// to the account's media library (MediaKey and VideoID are its key).
type AccountMedia struct {
	ID           string
	AccountID    string
	MediaKey     *string
	CreativeType string
	VideoID      *string
	MediaURL     *string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	Deleted      bool
}

// AccountMediaFilter narrows an account media list.
type AccountMediaFilter struct {
	AccountID     string
	IDs           []string
	CreativeTypes []string
}

// MediaCreative associates an account media with a line item.
type MediaCreative struct {
	ID             string
	AccountID      string
	LineItemID     string
	AccountMediaID string
	// CreativeType is the account media's.
	CreativeType   string
	LandingURL     *string
	ApprovalStatus string
	EntityStatus   string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Deleted        bool
}

// MediaCreativeFilter narrows a media creative list.
type MediaCreativeFilter struct {
	AccountID   string
	CampaignID  string
	LineItemIDs []string
	IDs         []string
}

// NewMediaCreative is what creating a media creative takes.
type NewMediaCreative struct {
	AccountID      string
	LineItemID     string
	AccountMediaID string
	LandingURL     *string
}

// MediaLibraryEntry is an upload added to an account's media library,
// with the media it names (and its poster's, when one was chosen).
type MediaLibraryEntry struct {
	AccountID      string
	MediaKey       string
	Name           *string
	FileName       *string
	Title          *string
	Description    *string
	PosterMediaKey *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Deleted        bool
	// Media is the upload the entry names.
	Media Media
	// PosterOutputKey is the blob key of the chosen poster ("" if none).
	PosterOutputKey string
	// Tweeted reports whether a post carries the media.
	Tweeted bool
}

// MediaLibraryFilter narrows a media library list.
type MediaLibraryFilter struct {
	AccountID string
	// Kind is a storage media kind (MediaPhoto, MediaVideo,
	// MediaAnimatedGIF); "" for any.
	Kind string
	// Terms must each be a word of the name, title, file name or
	// description (lower case).
	Terms []string
}

// MediaLibraryFields are the editable fields of a library entry; nil
// fields are left as they are on update (unset on create).
type MediaLibraryFields struct {
	Name           *string
	FileName       *string
	Title          *string
	Description    *string
	PosterMediaKey *string
}
