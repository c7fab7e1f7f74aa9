package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Limits of the cards endpoints (the spec's Limits table; the others are
// our decisions, docs/ads-cards.md).
const (
	maxName      = 80
	maxQ         = 80
	maxMediaKey  = 64
	maxURL       = 2048
	maxJSONBody  = 64 << 10
	codeNotFound = "NOT_FOUND"
)

// entity is a card in the generic handlers (a miss is 404 NOT_FOUND
// naming card_id).
var entity = adsx.Entity{PathValue: "card_id", NotFoundCode: codeNotFound}

// Lists: component cards page by 100 (1 to 200), the other kinds by the
// ads default (200, 1 to 1000); all sort by the same attributes, newest
// first by default.
var (
	sortable      = adsx.Sortable{"name", "card_type", "created_at", "updated_at"}
	componentList = adsx.ListSpec{Listing: storage.ListingCards, Sortable: sortable,
		Default: storage.Sort{Field: "created_at", Desc: true}, DefaultCount: 100, MaxCount: 200}
	kindList = adsx.ListSpec{Listing: storage.ListingCards, Sortable: sortable,
		Default: storage.Sort{Field: "created_at", Desc: true}}

	componentListParams = []string{"card_types", "card_id", "card_uris", "count", "cursor", "include_legacy_cards",
		"q", "sort_by", "with_deleted"}
	kindListParams = []string{"card_ids", "count", "cursor", "q", "sort_by", "with_deleted", "with_total_count"}
)

// Lists are the module's list specs (checked against the store's columns
// by TestListSpecsMapToColumns in package api).
func (*Module) Lists() []adsx.ListSpec { return []adsx.ListSpec{componentList, kindList} }

// namePrefix reads q (at most 80 characters, a case-insensitive name
// prefix).
func namePrefix(p *adsx.Params) string {
	if q := p.String("q", maxQ); q != nil {
		return *q
	}
	return ""
}

// listComponents serves GET .../cards: component cards only.
func (m *Module) listComponents(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	return adsx.List(m.deps.Kit, componentList, func(p *adsx.Params, acct storage.AdAccount) storage.CardFilter {
		f := storage.CardFilter{AccountID: acct.ID, Kind: storage.CardComponent,
			CardTypes: p.EnumList("card_types", componentCardTypes, 0), IDs: p.IDs("card_id"),
			URIs: p.List("card_uris", adsx.MaxIDs), NamePrefix: namePrefix(p)}
		// There are no legacy cards here: the flag is read and changes
		// nothing (docs/ads-cards.md).
		p.Flag("include_legacy_cards", false)
		return f
	}, m.deps.Store.ListCards, m.render)(w, r, p)
}

// listKind serves the list of poll, video or image conversation cards.
func (m *Module) listKind(kind string) adsx.HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
		p.Echo()["card_type"] = kind
		return adsx.List(m.deps.Kit, kindList, func(p *adsx.Params, acct storage.AdAccount) storage.CardFilter {
			return storage.CardFilter{AccountID: acct.ID, Kind: kind, IDs: p.IDs("card_ids"), NamePrefix: namePrefix(p)}
		}, m.deps.Store.ListCards, m.render)(w, r, p)
	}
}

// get serves one card of kind.
func (m *Module) get(kind string) adsx.HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
		load := func(ctx context.Context, accountID, id string, withDeleted bool) (storage.Card, error) {
			return m.deps.Store.Card(ctx, accountID, kind, id, withDeleted)
		}
		return adsx.Get(m.deps.Kit, entity, load, m.render)(w, r, p)
	}
}

// delete serves the delete of a card of kind: the answer is the card with
// deleted true (a component card stays, marked; the others are gone).
func (m *Module) delete(kind string) adsx.HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
		del := func(ctx context.Context, accountID, id string) (storage.Card, error) {
			c, err := m.deps.Store.DeleteCard(ctx, accountID, kind, id)
			if err == nil && c.DeletedAt == nil {
				at := c.UpdatedAt
				c.DeletedAt = &at
			}
			return c, err
		}
		return adsx.Delete(m.deps.Kit, entity, adsx.WithoutUser(del), m.render)(w, r, p)
	}
}

// render shows a card of any kind.
func (m *Module) render(c storage.Card) any {
	switch c.Kind {
	case storage.CardComponent:
		return renderComponentCard(c)
	case storage.CardPoll:
		return m.renderPoll(c)
	default:
		return m.renderConversation(c)
	}
}

// base are the fields every card shows.
type base struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	CardType string `json:"card_type"`
	CardURI  string `json:"card_uri"`
}

// stamps are the times and the deleted flag every card shows.
type stamps struct {
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
	Deleted   bool   `json:"deleted"`
}

func baseOf(c storage.Card) base {
	return base{ID: c.ID, Name: c.Name, CardType: c.CardType, CardURI: c.CardURI}
}

func stampsOf(c storage.Card) stamps {
	return stamps{CreatedAt: adsx.Time(c.CreatedAt), UpdatedAt: adsx.Time(c.UpdatedAt), Deleted: c.Deleted()}
}

// url is the public URL of blob key blobKey of media mediaKey, nil when
// either is empty or there are no MediaURLs.
func (m *Module) url(mediaKey, blobKey string) *string {
	u := m.deps.MediaURLs.Blob(mediaKey, blobKey)
	if u == "" {
		return nil
	}
	return &u
}

// numText renders a number as the text the platform sends.
func numText(n int64) *string {
	s := strconv.FormatInt(n, 10)
	return &s
}

// cardMedia is what a card keeps of a media library entry it shows.
type cardMedia struct {
	Key        string `json:"key"`
	Kind       string `json:"kind"`
	OwnerID    int64  `json:"owner_id"`
	Width      int    `json:"width"`
	Height     int    `json:"height"`
	DurationMS int64  `json:"duration_ms,omitempty"`
	OutputKey  string `json:"output_key,omitempty"`
	PreviewKey string `json:"preview_key,omitempty"`
}

func mediaOf(m storage.Media) cardMedia {
	return cardMedia{Key: m.Key, Kind: m.Kind, OwnerID: m.OwnerID, Width: m.Width, Height: m.Height,
		DurationMS: m.DurationMS, OutputKey: m.OutputKey, PreviewKey: m.PreviewKey}
}

// ratio is w:h reduced (video_width and video_height show it).
func (c cardMedia) ratio() (int64, int64) {
	g := gcd(c.Width, c.Height)
	if g == 0 {
		return 0, 0
	}
	return int64(c.Width / g), int64(c.Height / g)
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// near reports whether w:h is within 1% of rw:rh.
func near(w, h int, rw, rh float64) bool {
	if w <= 0 || h <= 0 {
		return false
	}
	got, want := float64(w)/float64(h), rw/rh
	return math.Abs(got-want)/want <= 0.01
}

// validMediaKey reports whether s can be a media key: 1 to 64 of
// [0-9A-Za-z_-].
func validMediaKey(s string) bool {
	if s == "" || len(s) > maxMediaKey {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// libraryMedia finds key in the account's media library for the
// parameter name; a miss (or a key no media can have) is recorded on p
// and reported as false.
func (m *Module) libraryMedia(r *http.Request, p *adsx.Params, accountID, name, key string) (storage.Media, bool, error) {
	if !validMediaKey(key) {
		p.Fail(name, fmt.Sprintf("%s %q is not a media key", name, printable(key)))
		return storage.Media{}, false, nil
	}
	e, err := m.deps.Store.MediaLibraryEntry(r.Context(), accountID, key)
	if err == nil {
		return e.Media, true, nil
	}
	if errors.Is(err, storage.ErrNotFound) {
		p.Fail(name, fmt.Sprintf("media %s of %s is not in the account's media library", key, name))
		return storage.Media{}, false, nil
	}
	return storage.Media{}, false, fmt.Errorf("load media library entry %s: %w", key, err)
}

// printable is s without NULs and invalid UTF-8 (for messages).
func printable(s string) string {
	return strings.ToValidUTF8(strings.ReplaceAll(s, "\x00", ""), "")
}

// webURL reports whether s is an absolute http(s) URL of at most maxURL
// characters.
func webURL(s string) bool {
	if utf8.RuneCountInString(s) > maxURL {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// encodeBody encodes a card body the package built.
func encodeBody(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode card body: %w", err)
	}
	return b, nil
}
