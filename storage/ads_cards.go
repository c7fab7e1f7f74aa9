package storage

import (
	"encoding/json"
	"strings"
	"time"
)

// Kinds of ads cards (table ads_cards, migration 0036): each has its own
// endpoints; one table holds them all so a card_uri names one card.
const (
	CardComponent         = "component"
	CardPoll              = "poll"
	CardVideoConversation = "video_conversation"
	CardImageConversation = "image_conversation"
)

// ListingCards is the ads list of cards (every kind lists from it).
const ListingCards Listing = "ads_cards"

// CardURIPrefix starts every card_uri: card://<id>.
const CardURIPrefix = "card://"

// CardURI is the card_uri of the card with id.
func CardURI(id string) string { return CardURIPrefix + id }

// CardIDOfURI is the id a card_uri names ("" and false when uri is not of
// the form card://<id>).
func CardIDOfURI(uri string) (string, bool) {
	id, ok := strings.CutPrefix(uri, CardURIPrefix)
	return id, ok && id != ""
}

// Card is an ads card of any kind. Body holds the fields of its kind as
// the feature stores them (api/ads/cards).
type Card struct {
	ID        string
	AccountID string
	Kind      string
	CardType  string
	CardURI   string
	Name      string
	Body      json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
	// DeletedAt is set on a deleted component card (the other kinds are
	// deleted for good).
	DeletedAt *time.Time
}

// Deleted reports whether the card is marked deleted.
func (c Card) Deleted() bool { return c.DeletedAt != nil }

// NewCard is a card to create; the store gives it its id and card_uri.
type NewCard struct {
	AccountID string
	Kind      string
	CardType  string
	Name      string
	Body      json.RawMessage
}

// CardFilter narrows a card list to one account and kind.
type CardFilter struct {
	AccountID string
	Kind      string
	CardTypes []string
	IDs       []string
	URIs      []string
	// NamePrefix keeps cards whose name starts with it, case-insensitive.
	NamePrefix string
}
