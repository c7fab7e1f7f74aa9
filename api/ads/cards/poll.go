package cards

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/api/apierr"
	"github.com/aviary-dev/aviary/storage"
)

// Poll card limits and card types.
const (
	minPollMinutes = 5
	maxPollMinutes = 10080
	maxChoice      = 25
	minImageWidth  = 800

	pollText  = "TEXT_POLLS"
	pollImage = "IMAGE_POLLS"
	pollVideo = "VIDEO_POLLS"
)

var pollParams = []string{"duration_in_minutes", "first_choice", "second_choice", "third_choice", "fourth_choice", "name", "media_key"}

// pollBody is a poll card's body.
type pollBody struct {
	Choices           []string   `json:"choices"`
	DurationInMinutes int        `json:"duration_in_minutes"`
	StartTime         time.Time  `json:"start_time"`
	EndTime           time.Time  `json:"end_time"`
	Media             *cardMedia `json:"media,omitempty"`
}

// createPoll serves POST .../cards/poll.
func (m *Module) createPoll(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	name := p.Required("name", maxName)
	minutes := 0
	if p.Has("duration_in_minutes") {
		if d := p.Int("duration_in_minutes", minPollMinutes, maxPollMinutes); d != nil {
			minutes = *d
		}
	} else {
		p.FailMissing("duration_in_minutes", "duration_in_minutes is missing")
	}
	choices := readChoices(p)
	key := p.String("media_key", maxMediaKey)
	if err := p.Err(); err != nil {
		return err
	}
	body := pollBody{Choices: choices, DurationInMinutes: minutes}
	cardType := pollText
	if key != nil {
		media, err := m.pollMedia(r, p, acct.ID, *key)
		if err != nil {
			return err
		}
		body.Media = &media
		cardType = pollImage
		if media.Kind == storage.MediaVideo {
			cardType = pollVideo
		}
	}
	// The poll opens when the card is created: the store's clock is not
	// read back, so the API's is the one start_time shows.
	body.StartTime = time.Now().UTC().Truncate(time.Second)
	body.EndTime = body.StartTime.Add(time.Duration(minutes) * time.Minute)
	raw, err := encodeBody(body)
	if err != nil {
		return err
	}
	c, err := m.deps.Store.CreateCard(r.Context(), storage.NewCard{AccountID: acct.ID, Kind: storage.CardPoll,
		CardType: cardType, Name: name, Body: raw})
	if err != nil {
		return fmt.Errorf("create poll card: %w", err)
	}
	return adsx.WriteData(w, p, http.StatusOK, m.renderPoll(c))
}

// choiceNames are the choice parameters in order.
var choiceNames = []string{"first_choice", "second_choice", "third_choice", "fourth_choice"}

// readChoices reads the 2 to 4 choices: the first two are required, and a
// choice needs every one before it.
func readChoices(p *adsx.Params) []string {
	var out []string
	for i, name := range choiceNames {
		var v *string
		if i < 2 {
			if s := p.Required(name, maxChoice); s != "" {
				v = &s
			}
		} else {
			v = p.String(name, maxChoice)
		}
		if i >= 2 && p.Has(name) {
			for _, before := range choiceNames[:i] {
				if !p.Has(before) {
					p.Fail(name, fmt.Sprintf("%s needs %s", name, joinNames(choiceNames[:i])))
					break
				}
			}
		}
		if v != nil {
			out = append(out, *v)
		}
	}
	return out
}

func joinNames(names []string) string {
	switch len(names) {
	case 2:
		return names[0] + " and " + names[1]
	default:
		return fmt.Sprintf("%s, %s and %s", names[0], names[1], names[2])
	}
}

// pollMedia checks a poll's media_key: the account must have the
// PROMOTED_MEDIA_POLLS feature, the media must be in its library, and be
// a video or an image at least 800 px wide at 1.91:1.
func (m *Module) pollMedia(r *http.Request, p *adsx.Params, accountID, key string) (cardMedia, error) {
	features, err := m.deps.Store.AdAccountFeatures(r.Context(), accountID)
	if err != nil {
		return cardMedia{}, fmt.Errorf("features of account %s: %w", accountID, err)
	}
	if !slices.Contains(features, storage.FeaturePromotedMediaPolls) {
		e := adsx.FeatureNotAvailable(storage.FeaturePromotedMediaPolls)
		e.Detail = "Polls with media need the account feature " + storage.FeaturePromotedMediaPolls
		e.Params = []apierr.ParamError{apierr.Param("media_key", e.Detail, key)}
		return cardMedia{}, e
	}
	media, ok, err := m.libraryMedia(r, p, accountID, "media_key", key)
	if err != nil || !ok {
		return cardMedia{}, firstErr(err, p.Err())
	}
	switch media.Kind {
	case storage.MediaVideo:
	case storage.MediaPhoto:
		checkWideImage(p, "media_key", media, 1.91, 1)
	default:
		p.Fail("media_key", fmt.Sprintf("media %s of media_key must be an image or a video", key))
	}
	return mediaOf(media), p.Err()
}

// checkWideImage requires an image at least 800 px wide at rw:rh.
func checkWideImage(p *adsx.Params, name string, media storage.Media, rw, rh float64) {
	if media.Width < minImageWidth || !near(media.Width, media.Height, rw, rh) {
		p.Fail(name, fmt.Sprintf("the image of %s must be at least %d px wide with a width:height ratio of %g:%g, got %dx%d",
			name, minImageWidth, rw, rh, media.Width, media.Height))
	}
}

// pollObject is the API's poll card; numbers are text, as the platform
// sends them.
type pollObject struct {
	base
	FirstChoice       string  `json:"first_choice,omitempty"`
	SecondChoice      string  `json:"second_choice,omitempty"`
	ThirdChoice       string  `json:"third_choice,omitempty"`
	FourthChoice      string  `json:"fourth_choice,omitempty"`
	StartTime         string  `json:"start_time"`
	EndTime           string  `json:"end_time"`
	DurationInMinutes *string `json:"duration_in_minutes"`
	// Image polls.
	MediaURL           *string `json:"media_url,omitempty"`
	ImageDisplayWidth  *string `json:"image_display_width,omitempty"`
	ImageDisplayHeight *string `json:"image_display_height,omitempty"`
	// Video polls.
	VideoURL               *string `json:"video_url,omitempty"`
	VideoHLSURL            *string `json:"video_hls_url,omitempty"`
	VideoWidth             *string `json:"video_width,omitempty"`
	VideoHeight            *string `json:"video_height,omitempty"`
	VideoPosterURL         *string `json:"video_poster_url,omitempty"`
	VideoPosterWidth       *string `json:"video_poster_width,omitempty"`
	VideoPosterHeight      *string `json:"video_poster_height,omitempty"`
	ContentDurationSeconds *string `json:"content_duration_seconds,omitempty"`
	stamps
}

func (m *Module) renderPoll(c storage.Card) pollObject {
	var b pollBody
	_ = json.Unmarshal(c.Body, &b) // written by this package
	o := pollObject{base: baseOf(c), StartTime: adsx.Time(b.StartTime), EndTime: adsx.Time(b.EndTime),
		DurationInMinutes: numText(int64(b.DurationInMinutes)), stamps: stampsOf(c)}
	for i, dst := range []*string{&o.FirstChoice, &o.SecondChoice, &o.ThirdChoice, &o.FourthChoice} {
		if i < len(b.Choices) {
			*dst = b.Choices[i]
		}
	}
	media := b.Media
	switch {
	case media == nil:
	case media.Kind == storage.MediaVideo:
		w, h := media.ratio()
		o.VideoURL, o.VideoHLSURL = m.url(media.Key, media.OutputKey), m.url(media.Key, media.OutputKey)
		o.VideoWidth, o.VideoHeight = numText(w), numText(h)
		o.VideoPosterURL = m.url(media.Key, media.PreviewKey)
		o.VideoPosterWidth, o.VideoPosterHeight = numText(w), numText(h)
		o.ContentDurationSeconds = numText((media.DurationMS + 500) / 1000)
	default:
		o.MediaURL = m.url(media.Key, media.OutputKey)
		o.ImageDisplayWidth, o.ImageDisplayHeight = numText(int64(media.Width)), numText(int64(media.Height))
	}
	return o
}
