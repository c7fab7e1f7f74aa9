package cards

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Conversation card limits.
const (
	maxCTA          = 20
	maxCTATweet     = 280
	maxThankYouText = 23
	maxCardTitle    = 23
)

// convKind is one of the two conversation card kinds: what its media_key
// must be and its card_type.
type convKind struct {
	kind      string
	cardType  string
	mediaKind string
}

var (
	videoKind = convKind{kind: storage.CardVideoConversation, cardType: "VIDEO_CONVERSATION", mediaKind: storage.MediaVideo}
	imageKind = convKind{kind: storage.CardImageConversation, cardType: "IMAGE_CONVERSATION", mediaKind: storage.MediaPhoto}

	ctaNames      = []string{"first_cta", "second_cta", "third_cta", "fourth_cta"}
	convParams    = []string{"name", "title", "thank_you_text", "thank_you_url", "media_key", "unlocked_image_media_key"}
	imageParams   = append(append(append([]string{}, convParams...), ctaNames...), tweetNames()...)
	videoParams   = append(append([]string{}, imageParams...), "poster_media_key", "unlocked_video_media_key")
	requiredConvs = []string{"name", "first_cta", "first_cta_tweet", "media_key", "thank_you_text"}
)

func tweetNames() []string {
	out := make([]string, len(ctaNames))
	for i, n := range ctaNames {
		out[i] = n + "_tweet"
	}
	return out
}

// conversationBody is a conversation card's body.
type conversationBody struct {
	Title         string     `json:"title,omitempty"`
	CTAs          [4]string  `json:"ctas"`
	CTATweets     [4]string  `json:"cta_tweets"`
	ThankYouText  string     `json:"thank_you_text"`
	ThankYouURL   string     `json:"thank_you_url,omitempty"`
	Media         cardMedia  `json:"media"`
	Poster        *cardMedia `json:"poster,omitempty"`
	UnlockedImage *cardMedia `json:"unlocked_image,omitempty"`
	UnlockedVideo *cardMedia `json:"unlocked_video,omitempty"`
}

// createConversation serves POST .../cards/video_conversation and
// .../cards/image_conversation.
func (m *Module) createConversation(k convKind) adsx.HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
		acct, err := m.deps.Kit.Account(r)
		if err != nil {
			return err
		}
		c := storage.Card{Kind: k.kind, CardType: k.cardType}
		var body conversationBody
		if err := m.readConversation(r, p, acct.ID, k, &c, &body, true); err != nil {
			return err
		}
		raw, err := encodeBody(body)
		if err != nil {
			return err
		}
		c, err = m.deps.Store.CreateCard(r.Context(), storage.NewCard{AccountID: acct.ID, Kind: k.kind,
			CardType: k.cardType, Name: c.Name, Body: raw})
		if err != nil {
			return fmt.Errorf("create %s card: %w", k.kind, err)
		}
		return adsx.WriteData(w, p, http.StatusOK, m.renderConversation(c))
	}
}

// updateConversation serves PUT of a conversation card: the parameters
// sent replace the card's, and the card they make must follow every
// rule of a new one. The card is read and checked (media lookups
// included) outside the store's transaction, then written only if no
// other update came in between; else the request starts over.
func (m *Module) updateConversation(k convKind) adsx.HandleFunc {
	return func(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
		acct, err := m.deps.Kit.Account(r)
		if err != nil {
			return err
		}
		id := r.PathValue("card_id")
		for range maxUpdateRounds {
			c, err := m.updateConversationOnce(r, p, acct.ID, k, id)
			if errors.Is(err, errCardChanged) {
				continue
			}
			if err != nil {
				return err
			}
			return adsx.WriteData(w, p, http.StatusOK, m.renderConversation(c))
		}
		return fmt.Errorf("update %s card %s: changed by %d concurrent updates", k.kind, id, maxUpdateRounds)
	}
}

// maxUpdateRounds bounds how often an update starts over because of a
// concurrent one.
const maxUpdateRounds = 10

// errCardChanged is a card updated since it was read.
var errCardChanged = errors.New("card changed since it was read")

// updateConversationOnce reads card id, applies and checks the
// parameters, and writes it unless it changed meanwhile (errCardChanged).
func (m *Module) updateConversationOnce(r *http.Request, p *adsx.Params, accountID string, k convKind, id string) (storage.Card, error) {
	cur, err := m.deps.Store.Card(r.Context(), accountID, k.kind, id, false)
	if err != nil {
		return cur, entity.Err(id, err)
	}
	var body conversationBody
	if err := json.Unmarshal(cur.Body, &body); err != nil {
		return cur, fmt.Errorf("decode %s card %s: %w", k.kind, id, err)
	}
	next := cur
	if err := m.readConversation(r, p, accountID, k, &next, &body, false); err != nil {
		return cur, err
	}
	raw, err := encodeBody(body)
	if err != nil {
		return cur, err
	}
	c, err := m.deps.Store.UpdateCard(r.Context(), accountID, k.kind, id, func(c *storage.Card) error {
		if !c.UpdatedAt.Equal(cur.UpdatedAt) || string(c.Body) != string(cur.Body) {
			return errCardChanged
		}
		c.Name, c.Body = next.Name, raw
		return nil
	})
	if errors.Is(err, errCardChanged) {
		return c, err
	}
	if err != nil {
		return c, entity.Err(id, err)
	}
	return c, nil
}

// readConversation applies the parameters to card c and its body, then
// checks the whole: text rules, the CTA pairs, then the media.
func (m *Module) readConversation(r *http.Request, p *adsx.Params, accountID string, k convKind, c *storage.Card, b *conversationBody, create bool) error {
	text := func(name string, maxLen int, dst *string) {
		var v *string
		if create && slices.Contains(requiredConvs, name) {
			if s := p.Required(name, maxLen); s != "" {
				v = &s
			}
		} else {
			v = p.String(name, maxLen)
		}
		if v != nil {
			*dst = *v
		}
	}
	text("name", maxName, &c.Name)
	text("title", maxCardTitle, &b.Title)
	text("thank_you_text", maxThankYouText, &b.ThankYouText)
	text("thank_you_url", maxURL, &b.ThankYouURL)
	if p.Has("thank_you_url") && !p.Failed("thank_you_url") && !webURL(b.ThankYouURL) {
		p.Fail("thank_you_url", "thank_you_url must be an absolute http or https URL")
	}
	for i, name := range ctaNames {
		text(name, 0, &b.CTAs[i])
		if p.Has(name) && !p.Failed(name) {
			checkCTA(p, name, b.CTAs[i])
		}
		text(name+"_tweet", maxCTATweet, &b.CTATweets[i])
	}
	checkPairs(p, b)
	keys := map[string]*string{}
	for _, name := range []string{"media_key", "poster_media_key", "unlocked_image_media_key", "unlocked_video_media_key"} {
		var v string
		text(name, maxMediaKey, &v)
		if v != "" {
			keys[name] = &v
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	if err := m.conversationMedia(r, p, accountID, k, b, keys); err != nil {
		return err
	}
	return p.Err()
}

// checkCTA: a CTA is a hashtag of at most 20 characters, not counting
// one leading #, without spaces.
func checkCTA(p *adsx.Params, name, v string) {
	tag := strings.TrimPrefix(v, "#")
	switch {
	case tag == "":
		p.Fail(name, fmt.Sprintf("%s must have text after the #", name))
	case utf8.RuneCountInString(tag) > maxCTA:
		p.Fail(name, fmt.Sprintf("%s must be at most %d characters, not counting the leading #", name, maxCTA))
	case strings.ContainsFunc(tag, unicode.IsSpace):
		p.Fail(name, fmt.Sprintf("%s is a hashtag and must not contain spaces", name))
	}
}

// checkPairs checks the card as the parameters leave it: a title or a
// second CTA; each CTA with its post text and each post text with its
// CTA; a CTA only after the ones before it.
func checkPairs(p *adsx.Params, b *conversationBody) {
	if b.Title == "" && b.CTAs[1] == "" {
		p.FailMissing("title", "title is required when second_cta is not set (and second_cta when title is not set)")
	}
	for i, name := range ctaNames {
		tweet := name + "_tweet"
		switch {
		case b.CTAs[i] != "" && b.CTATweets[i] == "":
			p.FailMissing(tweet, fmt.Sprintf("%s is required when %s is set", tweet, name))
		case b.CTAs[i] == "" && b.CTATweets[i] != "":
			p.Fail(tweet, fmt.Sprintf("%s needs %s", tweet, name))
		case i > 0 && b.CTAs[i] != "" && b.CTAs[i-1] == "":
			p.Fail(name, fmt.Sprintf("%s needs %s", name, ctaNames[i-1]))
		}
	}
}

// conversationMedia checks the media keys sent and sets them on the body:
// media_key of the kind's media (a 16:9 video, or an image at least 800
// px wide at 1.91:1), a poster image, an unlocked image (5:2 on image
// cards) and an unlocked video, all from the account's media library.
func (m *Module) conversationMedia(r *http.Request, p *adsx.Params, accountID string, k convKind, b *conversationBody, keys map[string]*string) error {
	load := func(name, kind string) (*storage.Media, error) {
		key := keys[name]
		if key == nil {
			return nil, nil
		}
		media, ok, err := m.libraryMedia(r, p, accountID, name, *key)
		if err != nil || !ok {
			return nil, err
		}
		if media.Kind != kind {
			noun := map[string]string{storage.MediaVideo: "a video", storage.MediaPhoto: "an image"}[kind]
			p.Fail(name, fmt.Sprintf("media %s of %s must be %s", *key, name, noun))
			return nil, nil
		}
		return &media, nil
	}
	media, err := load("media_key", k.mediaKind)
	if err != nil {
		return err
	}
	if media != nil {
		if k.mediaKind == storage.MediaVideo && !near(media.Width, media.Height, 16, 9) {
			p.Fail("media_key", fmt.Sprintf("the video of media_key must have a 16:9 aspect ratio, got %dx%d", media.Width, media.Height))
		}
		if k.mediaKind == storage.MediaPhoto {
			checkWideImage(p, "media_key", *media, 1.91, 1)
		}
		b.Media = mediaOf(*media)
	}
	for _, it := range []struct {
		name, kind string
		dst        **cardMedia
	}{{"poster_media_key", storage.MediaPhoto, &b.Poster}, {"unlocked_image_media_key", storage.MediaPhoto, &b.UnlockedImage},
		{"unlocked_video_media_key", storage.MediaVideo, &b.UnlockedVideo}} {
		got, err := load(it.name, it.kind)
		if err != nil {
			return err
		}
		if got == nil {
			continue
		}
		if it.name == "unlocked_image_media_key" && k.mediaKind == storage.MediaPhoto {
			checkWideImage(p, it.name, *got, 5, 2)
		}
		cm := mediaOf(*got)
		*it.dst = &cm
	}
	return nil
}

// conversationObject is the API's video or image conversation card.
type conversationObject struct {
	base
	Title          string  `json:"title,omitempty"`
	FirstCTA       string  `json:"first_cta,omitempty"`
	FirstCTATweet  string  `json:"first_cta_tweet,omitempty"`
	SecondCTA      string  `json:"second_cta,omitempty"`
	SecondCTATweet string  `json:"second_cta_tweet,omitempty"`
	ThirdCTA       string  `json:"third_cta,omitempty"`
	ThirdCTATweet  string  `json:"third_cta_tweet,omitempty"`
	FourthCTA      string  `json:"fourth_cta,omitempty"`
	FourthCTATweet string  `json:"fourth_cta_tweet,omitempty"`
	ThankYouText   string  `json:"thank_you_text,omitempty"`
	ThankYouURL    string  `json:"thank_you_url,omitempty"`
	MediaKey       string  `json:"media_key,omitempty"`
	MediaURL       *string `json:"media_url"`
	// Video cards.
	PosterMediaURL        *string `json:"poster_media_url,omitempty"`
	VideoOwnerID          *string `json:"video_owner_id,omitempty"`
	VideoWidth            *string `json:"video_width,omitempty"`
	VideoHeight           *string `json:"video_height,omitempty"`
	UnlockedVideoMediaKey string  `json:"unlocked_video_media_key,omitempty"`
	// Image cards.
	ImageDisplayWidth  *string `json:"image_display_width,omitempty"`
	ImageDisplayHeight *string `json:"image_display_height,omitempty"`
	stamps
}

func (m *Module) renderConversation(c storage.Card) conversationObject {
	var b conversationBody
	_ = json.Unmarshal(c.Body, &b) // written by this package
	o := conversationObject{base: baseOf(c), Title: b.Title,
		FirstCTA: b.CTAs[0], FirstCTATweet: b.CTATweets[0], SecondCTA: b.CTAs[1], SecondCTATweet: b.CTATweets[1],
		ThirdCTA: b.CTAs[2], ThirdCTATweet: b.CTATweets[2], FourthCTA: b.CTAs[3], FourthCTATweet: b.CTATweets[3],
		ThankYouText: b.ThankYouText, ThankYouURL: b.ThankYouURL, MediaKey: b.Media.Key,
		MediaURL: m.url(b.Media.Key, b.Media.OutputKey), stamps: stampsOf(c)}
	if c.Kind == storage.CardImageConversation {
		o.ImageDisplayWidth, o.ImageDisplayHeight = numText(int64(b.Media.Width)), numText(int64(b.Media.Height))
		return o
	}
	w, h := b.Media.ratio()
	o.VideoWidth, o.VideoHeight = numText(w), numText(h)
	o.VideoOwnerID = numText(b.Media.OwnerID)
	o.PosterMediaURL = m.url(b.Media.Key, b.Media.PreviewKey)
	if b.Poster != nil {
		o.PosterMediaURL = m.url(b.Poster.Key, b.Poster.OutputKey)
	}
	if b.UnlockedVideo != nil {
		o.UnlockedVideoMediaKey = b.UnlockedVideo.Key
	}
	return o
}
