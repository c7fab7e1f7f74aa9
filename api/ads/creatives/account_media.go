package creatives

import (
	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// codeAccountMediaNotFound is the 404 of an account media the account
// does not have.
const codeAccountMediaNotFound = "ACCOUNT_MEDIA_NOT_FOUND"

// accountMediaList is how account media lists page and sort.
var accountMediaList = adsx.ListSpec{
	Listing:  storage.ListingAccountMedia,
	Sortable: adsx.Sortable{"created_at", "updated_at", "creative_type"},
	Default:  storage.Sort{Field: "created_at"},
}

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{accountMediaList, mediaCreativeList} }

// accountMediaObject is the API's account media.
type accountMediaObject struct {
	ID           string  `json:"id"`
	VideoID      *string `json:"video_id"`
	MediaURL     *string `json:"media_url"`
	CreativeType string  `json:"creative_type"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
	Deleted      bool    `json:"deleted"`
}

func renderAccountMedia(a storage.AccountMedia) accountMediaObject {
	return accountMediaObject{ID: a.ID, VideoID: a.VideoID, MediaURL: a.MediaURL, CreativeType: a.CreativeType,
		CreatedAt: adsx.Time(a.CreatedAt), UpdatedAt: adsx.Time(a.UpdatedAt), Deleted: a.Deleted}
}
