// Package cards serves the advertising API's cards (issue 30): component
// cards (POST /12/accounts/:account_id/cards, JSON only, card_type derived
// from the components), poll cards, and video and image conversation
// cards. Every kind lives in one table (storage.Card, ads_cards) so that a
// card_uri (card://<id>) names one card whatever its kind; the fields of a
// kind are the card's body. Media a card shows must be in the account's
// media library. Poll and conversation cards are deleted for good;
// component cards are marked deleted. See docs/ads-cards.md.
package cards

import (
	"context"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// Store is what the cards endpoints need of storage (*postgres.DB).
type Store interface {
	CreateCard(ctx context.Context, n storage.NewCard) (storage.Card, error)
	Card(ctx context.Context, accountID, kind, id string, withDeleted bool) (storage.Card, error)
	ListCards(ctx context.Context, f storage.CardFilter, opts storage.ListOptions) (storage.Page[storage.Card], error)
	UpdateCard(ctx context.Context, accountID, kind, id string, apply func(*storage.Card) error) (storage.Card, error)
	DeleteCard(ctx context.Context, accountID, kind, id string) (storage.Card, error)
	// MediaLibraryEntry loads the account's (not deleted) library entry of
	// a media key with its media (storage.ErrNotFound).
	MediaLibraryEntry(ctx context.Context, accountID, key string) (storage.MediaLibraryEntry, error)
	AdAccountFeatures(ctx context.Context, accountID string) ([]string, error)
}

// Deps are the module's dependencies.
type Deps struct {
	Kit   adsx.Kit
	Store Store
	// MediaURLs renders the public URLs of media blobs (media_url,
	// poster_media_url, video_url); nil renders them as null.
	MediaURLs *render.MediaURLs
}

// Module serves the cards endpoints.
type Module struct {
	deps Deps
}

// New builds the module.
func New(d Deps) *Module { return &Module{deps: d} }

const (
	cardsPath = "/12/accounts/{account_id}/cards"
	cardPath  = cardsPath + "/{card_id}"
	pollsPath = cardsPath + "/poll"
	pollPath  = pollsPath + "/{card_id}"
	videoPath = cardsPath + "/video_conversation"
	videoItem = videoPath + "/{card_id}"
	imagePath = cardsPath + "/image_conversation"
	imageItem = imagePath + "/{card_id}"
)

// Routes lists the module's endpoints.
func (m *Module) Routes() []httpx.Endpoint {
	k := m.deps.Kit
	jsonBody := &httpx.Body{MaxBytes: maxJSONBody, Types: []string{httpx.ContentJSON}}
	withDeleted := []string{"with_deleted"}
	return k.Endpoints([]adsx.Route{
		{Pattern: "GET " + cardsPath, Params: componentListParams, Handle: m.listComponents},
		{Pattern: "GET " + cardPath, Params: withDeleted, Handle: m.get(storage.CardComponent)},
		{Pattern: "POST " + cardsPath, Write: true, Body: jsonBody, Handle: m.createComponent},
		{Pattern: "PUT " + cardPath, Write: true, Body: jsonBody, Handle: m.updateComponent},
		{Pattern: "DELETE " + cardPath, Write: true, Handle: m.delete(storage.CardComponent)},

		{Pattern: "GET " + pollsPath, Params: kindListParams, Handle: m.listKind(storage.CardPoll)},
		{Pattern: "GET " + pollPath, Params: withDeleted, Handle: m.get(storage.CardPoll)},
		{Pattern: "POST " + pollsPath, Params: pollParams, Write: true, Handle: m.createPoll},
		{Pattern: "DELETE " + pollPath, Write: true, Handle: m.delete(storage.CardPoll)},

		{Pattern: "GET " + videoPath, Params: kindListParams, Handle: m.listKind(storage.CardVideoConversation)},
		{Pattern: "GET " + videoItem, Params: withDeleted, Handle: m.get(storage.CardVideoConversation)},
		{Pattern: "POST " + videoPath, Params: videoParams, Write: true, Handle: m.createConversation(videoKind)},
		{Pattern: "PUT " + videoItem, Params: videoParams, Write: true, Handle: m.updateConversation(videoKind)},
		{Pattern: "DELETE " + videoItem, Write: true, Handle: m.delete(storage.CardVideoConversation)},

		{Pattern: "GET " + imagePath, Params: kindListParams, Handle: m.listKind(storage.CardImageConversation)},
		{Pattern: "GET " + imageItem, Params: withDeleted, Handle: m.get(storage.CardImageConversation)},
		{Pattern: "POST " + imagePath, Params: imageParams, Write: true, Handle: m.createConversation(imageKind)},
		{Pattern: "PUT " + imageItem, Params: imageParams, Write: true, Handle: m.updateConversation(imageKind)},
		{Pattern: "DELETE " + imageItem, Write: true, Handle: m.delete(storage.CardImageConversation)},
	})
}
