package cards

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/aviary-dev/aviary/api/ads/adsx"
	"github.com/aviary-dev/aviary/storage"
)

// Component types, label values and destination types of component cards.
const (
	typeMedia          = "MEDIA"
	typeSwipeable      = "SWIPEABLE_MEDIA"
	typeDetails        = "DETAILS"
	typeButton         = "BUTTON"
	destinationWebsite = "WEBSITE"
	destinationApp     = "APP"
	labelEnum          = "ENUM"

	minSwipeable = 2
	maxSwipeable = 6
	minSlides    = 2
	maxSlides    = 6
	maxTitle     = 70
	maxAppField  = 255
)

var (
	componentTypes   = []string{typeButton, typeDetails, typeMedia, typeSwipeable}
	mediaComponents  = []string{typeMedia, typeSwipeable}
	detailComponents = []string{typeDetails, typeButton}
	labelValues      = []string{"BOOK", "CONNECT", "INSTALL", "OPEN", "ORDER", "PLAY", "SHOP"}

	// componentCardTypes are the card_type values of component cards.
	componentCardTypes = []string{"IMAGE_APP", "IMAGE_CAROUSEL_APP", "IMAGE_CAROUSEL_WEBSITE", "IMAGE_MULTI_DEST_CAROUSEL_WEBSITE",
		"IMAGE_WEBSITE", "MIXED_MEDIA_MULTI_DEST_CAROUSEL_WEBSITE", "MIXED_MEDIA_SINGLE_DEST_CAROUSEL_APP",
		"MIXED_MEDIA_SINGLE_DEST_CAROUSEL_WEBSITE", "VIDEO_APP", "VIDEO_CAROUSEL_APP", "VIDEO_CAROUSEL_WEBSITE",
		"VIDEO_MULTI_DEST_CAROUSEL_WEBSITE", "VIDEO_WEBSITE"}
)

// component is one component as stored and shown.
type component struct {
	Type        string       `json:"type"`
	MediaKey    string       `json:"media_key,omitempty"`
	MediaKeys   []string     `json:"media_keys,omitempty"`
	Title       string       `json:"title,omitempty"`
	Label       *label       `json:"label,omitempty"`
	Destination *destination `json:"destination,omitempty"`
}

type label struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

type destination struct {
	Type                  string `json:"type"`
	URL                   string `json:"url,omitempty"`
	CountryCode           string `json:"country_code,omitempty"`
	GoogleplayAppID       string `json:"googleplay_app_id,omitempty"`
	GoogleplayDeepLink    string `json:"googleplay_deep_link,omitempty"`
	IOSAppStoreIdentifier string `json:"ios_app_store_identifier,omitempty"`
	IOSDeepLink           string `json:"ios_deep_link,omitempty"`
}

// componentBody is a component card's body: its components, or its
// slides (a multi-destination carousel), in render order.
type componentBody struct {
	Components []component   `json:"components,omitempty"`
	Slides     [][]component `json:"slides,omitempty"`
}

// componentObject is the API's component card.
type componentObject struct {
	base
	Components []component   `json:"components,omitempty"`
	Slides     [][]component `json:"slides,omitempty"`
	stamps
}

func renderComponentCard(c storage.Card) componentObject {
	var b componentBody
	_ = json.Unmarshal(c.Body, &b) // written by this package
	return componentObject{base: baseOf(c), Components: b.Components, Slides: b.Slides, stamps: stampsOf(c)}
}

// createComponent serves POST .../cards (a JSON body).
func (m *Module) createComponent(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	obj, err := readJSONObject(r)
	if err != nil {
		return err
	}
	j := jsonReader{p}
	j.only("", obj, "name", "components", "slides")
	name, _ := j.required("", obj, "name", maxName)
	body, err := j.content(obj, true)
	if err != nil {
		return err
	}
	if err := p.Err(); err != nil {
		return err
	}
	cardType, err := m.cardType(r, p, acct.ID, body)
	if err != nil {
		return err
	}
	raw, err := encodeBody(body)
	if err != nil {
		return err
	}
	c, err := m.deps.Store.CreateCard(r.Context(), storage.NewCard{AccountID: acct.ID, Kind: storage.CardComponent,
		CardType: cardType, Name: name, Body: raw})
	if err != nil {
		return fmt.Errorf("create component card: %w", err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderComponentCard(c))
}

// updateComponent serves PUT .../cards/{card_id} (a JSON body): the name,
// and the components or slides, sent replace the card's.
func (m *Module) updateComponent(w http.ResponseWriter, r *http.Request, p *adsx.Params) error {
	acct, err := m.deps.Kit.Account(r)
	if err != nil {
		return err
	}
	id := r.PathValue("card_id")
	if _, err := m.deps.Store.Card(r.Context(), acct.ID, storage.CardComponent, id, false); err != nil {
		return entity.Err(id, err)
	}
	obj, err := readJSONObject(r)
	if err != nil {
		return err
	}
	j := jsonReader{p}
	j.only("", obj, "name", "components", "slides")
	name, hasName := j.optional("", obj, "name", maxName)
	body, err := j.content(obj, false)
	if err != nil {
		return err
	}
	if err := p.Err(); err != nil {
		return err
	}
	cardType := ""
	if body != nil {
		if cardType, err = m.cardType(r, p, acct.ID, body); err != nil {
			return err
		}
	}
	c, err := m.deps.Store.UpdateCard(r.Context(), acct.ID, storage.CardComponent, id, func(c *storage.Card) error {
		if hasName {
			c.Name = name
		}
		if body == nil {
			return nil
		}
		raw, err := encodeBody(body)
		c.CardType, c.Body = cardType, raw
		return err
	})
	if err != nil {
		return entity.Err(id, err)
	}
	return adsx.WriteData(w, p, http.StatusOK, renderComponentCard(c))
}

// content reads exactly one of components and slides (none at all only
// when !required): nil when neither was sent.
func (j jsonReader) content(obj map[string]json.RawMessage, required bool) (*componentBody, error) {
	rawC, hasC := obj["components"]
	rawS, hasS := obj["slides"]
	switch {
	case hasC && hasS:
		return nil, adsx.Exclusive("components", "slides")
	case hasC:
		return &componentBody{Components: j.components(rawC)}, nil
	case hasS:
		return &componentBody{Slides: j.slides(rawS)}, nil
	case required:
		j.p.FailMissing("components", "One of components or slides is required")
	}
	return nil, nil
}

// components reads a components array: one media component (MEDIA or
// SWIPEABLE_MEDIA) then one DETAILS or BUTTON component.
func (j jsonReader) components(raw json.RawMessage) []component {
	items, ok := j.array("components", raw)
	if !ok {
		return nil
	}
	if len(items) != 2 {
		j.p.Fail("components", fmt.Sprintf("components takes one media component (MEDIA or SWIPEABLE_MEDIA) followed by one DETAILS or BUTTON component, got %d components", len(items)))
		return nil
	}
	return []component{
		j.component(index("components", 0), items[0], mediaComponents),
		j.component(index("components", 1), items[1], detailComponents),
	}
}

// slides reads the slides of a multi-destination carousel: 2 to 6, each
// a MEDIA component then a DETAILS component (website destination).
func (j jsonReader) slides(raw json.RawMessage) [][]component {
	items, ok := j.array("slides", raw)
	if !ok {
		return nil
	}
	if len(items) < minSlides || len(items) > maxSlides {
		j.p.Fail("slides", fmt.Sprintf("slides takes %d to %d slides, got %d", minSlides, maxSlides, len(items)))
		return nil
	}
	out := make([][]component, len(items))
	for i, item := range items {
		name := index("slides", i)
		comps, ok := j.array(name, item)
		if !ok {
			continue
		}
		if len(comps) != 2 {
			j.p.Fail(name, fmt.Sprintf("%s takes a MEDIA component followed by a DETAILS component, got %d components", name, len(comps)))
			continue
		}
		out[i] = []component{
			j.component(index(name, 0), comps[0], []string{typeMedia}),
			j.component(index(name, 1), comps[1], []string{typeDetails}),
		}
	}
	return out
}

// component reads one component whose type must be one of want.
func (j jsonReader) component(name string, raw json.RawMessage, want []string) component {
	obj, ok := j.object(name, raw)
	if !ok {
		return component{}
	}
	typ, ok := j.required(name, obj, "type", 32)
	if !ok {
		return component{}
	}
	c := component{Type: typ}
	switch {
	case !slices.Contains(componentTypes, typ):
		j.p.Fail(child(name, "type"), fmt.Sprintf("Expected enum value of [%s], got %q for %s", strings.Join(componentTypes, ", "), typ, child(name, "type")))
		return c
	case !slices.Contains(want, typ):
		j.p.Fail(child(name, "type"), fmt.Sprintf("%s must be one of [%s] at this position, got %s", child(name, "type"), strings.Join(want, ", "), typ))
		return c
	}
	switch typ {
	case typeMedia:
		j.only(name, obj, "type", "media_key")
		c.MediaKey, _ = j.required(name, obj, "media_key", maxMediaKey)
	case typeSwipeable:
		j.only(name, obj, "type", "media_keys")
		c.MediaKeys = j.mediaKeys(child(name, "media_keys"), obj)
	case typeDetails:
		j.only(name, obj, "type", "title", "destination")
		c.Title, _ = j.required(name, obj, "title", maxTitle)
		c.Destination = j.destination(name, obj, destinationWebsite)
	case typeButton:
		j.only(name, obj, "type", "label", "destination")
		c.Label = j.label(name, obj)
		c.Destination = j.destination(name, obj, destinationApp)
	}
	return c
}

// mediaKeys reads the 2 to 6 distinct media keys of a SWIPEABLE_MEDIA.
func (j jsonReader) mediaKeys(name string, obj map[string]json.RawMessage) []string {
	raw, ok := obj["media_keys"]
	if !ok {
		j.p.FailMissing(name, name+" is missing")
		return nil
	}
	items, ok := j.array(name, raw)
	if !ok {
		return nil
	}
	if len(items) < minSwipeable || len(items) > maxSwipeable {
		j.p.Fail(name, fmt.Sprintf("%s takes %d to %d media keys, got %d", name, minSwipeable, maxSwipeable, len(items)))
		return nil
	}
	keys := make([]string, 0, len(items))
	for i, item := range items {
		k, ok := j.str(index(name, i), item, maxMediaKey)
		if !ok {
			return nil
		}
		if slices.Contains(keys, k) {
			j.p.Fail(index(name, i), fmt.Sprintf("%s repeats media key %s", name, k))
			return nil
		}
		keys = append(keys, k)
	}
	return keys
}

// label reads a BUTTON's label: type ENUM and one of the label values.
func (j jsonReader) label(name string, obj map[string]json.RawMessage) *label {
	raw, ok := obj["label"]
	name = child(name, "label")
	if !ok {
		j.p.FailMissing(name, name+" is missing")
		return nil
	}
	lo, ok := j.object(name, raw)
	if !ok {
		return nil
	}
	j.only(name, lo, "type", "value")
	l := &label{}
	if l.Type, ok = j.required(name, lo, "type", 16); ok && l.Type != labelEnum {
		j.p.Fail(child(name, "type"), fmt.Sprintf("%s must be %s, got %q", child(name, "type"), labelEnum, l.Type))
	}
	if l.Value, ok = j.required(name, lo, "value", 16); ok && !slices.Contains(labelValues, l.Value) {
		j.p.Fail(child(name, "value"), fmt.Sprintf("Expected enum value of [%s], got %q for %s", strings.Join(labelValues, ", "), l.Value, child(name, "value")))
	}
	return l
}

// destination reads a component's destination, of type want (WEBSITE for
// DETAILS, APP for BUTTON).
func (j jsonReader) destination(name string, obj map[string]json.RawMessage, want string) *destination {
	raw, ok := obj["destination"]
	name = child(name, "destination")
	if !ok {
		j.p.FailMissing(name, name+" is missing")
		return nil
	}
	do, ok := j.object(name, raw)
	if !ok {
		return nil
	}
	d := &destination{}
	if d.Type, ok = j.required(name, do, "type", 16); !ok {
		return nil
	}
	if d.Type != want {
		j.p.Fail(child(name, "type"), fmt.Sprintf("%s must be %s here (WEBSITE goes with DETAILS, APP with BUTTON), got %q", child(name, "type"), want, d.Type))
		return nil
	}
	if want == destinationWebsite {
		j.only(name, do, "type", "url")
		if u, ok := j.required(name, do, "url", maxURL); ok {
			if !webURL(u) {
				j.p.Fail(child(name, "url"), fmt.Sprintf("%s must be an absolute http or https URL", child(name, "url")))
			}
			d.URL = u
		}
		return d
	}
	j.app(name, do, d)
	return d
}

// app reads an APP destination: a country code, a Google Play or App
// Store app (or both), and deep links only with their app.
func (j jsonReader) app(name string, do map[string]json.RawMessage, d *destination) {
	j.only(name, do, "type", "country_code", "googleplay_app_id", "googleplay_deep_link", "ios_app_store_identifier", "ios_deep_link")
	if cc, ok := j.required(name, do, "country_code", 2); ok {
		if !storage.IsCountryCode(cc) {
			j.p.Fail(child(name, "country_code"), fmt.Sprintf("%s must be an ISO 3166-1 alpha-2 country code, got %q", child(name, "country_code"), cc))
		}
		d.CountryCode = cc
	}
	d.GoogleplayAppID, _ = j.optional(name, do, "googleplay_app_id", maxAppField)
	d.IOSAppStoreIdentifier, _ = j.optional(name, do, "ios_app_store_identifier", maxAppField)
	d.GoogleplayDeepLink, _ = j.optional(name, do, "googleplay_deep_link", maxURL)
	d.IOSDeepLink, _ = j.optional(name, do, "ios_deep_link", maxURL)
	_, hasGP := do["googleplay_app_id"]
	_, hasIOS := do["ios_app_store_identifier"]
	if !hasGP && !hasIOS {
		j.p.FailMissing(child(name, "googleplay_app_id"), fmt.Sprintf("%s needs googleplay_app_id or ios_app_store_identifier", name))
	}
	if _, ok := do["googleplay_deep_link"]; ok && !hasGP {
		j.p.Fail(child(name, "googleplay_deep_link"), "googleplay_deep_link needs googleplay_app_id")
	}
	if _, ok := do["ios_deep_link"]; ok && !hasIOS {
		j.p.Fail(child(name, "ios_deep_link"), "ios_deep_link needs ios_app_store_identifier")
	}
}

// Media classes of a card's media.
const (
	classImage = "IMAGE"
	classVideo = "VIDEO"
	classMixed = "MIXED_MEDIA"
)

// cardType checks that every media key of body is an image or a video of
// the account's media library, and derives the card_type.
func (m *Module) cardType(r *http.Request, p *adsx.Params, accountID string, body *componentBody) (string, error) {
	var classes []string
	check := func(name, key string) error {
		media, ok, err := m.libraryMedia(r, p, accountID, name, key)
		if err != nil || !ok {
			return err
		}
		switch media.Kind {
		case storage.MediaPhoto:
			classes = append(classes, classImage)
		case storage.MediaVideo:
			classes = append(classes, classVideo)
		default:
			p.Fail(name, fmt.Sprintf("media %s of %s must be an image or a video", key, name))
		}
		return nil
	}
	var err error
	if body.Slides != nil {
		for i, slide := range body.Slides {
			err = firstErr(err, check(child(index(index("slides", i), 0), "media_key"), slide[0].MediaKey))
		}
	} else {
		media := body.Components[0]
		if media.Type == typeMedia {
			err = check(child(index("components", 0), "media_key"), media.MediaKey)
		}
		for i, k := range media.MediaKeys {
			err = firstErr(err, check(index(child(index("components", 0), "media_keys"), i), k))
		}
	}
	if err != nil {
		return "", err
	}
	if err := p.Err(); err != nil {
		return "", err
	}
	return deriveCardType(body, class(classes)), nil
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// class is IMAGE or VIDEO when every media is one, else MIXED_MEDIA.
func class(classes []string) string {
	for _, c := range classes[1:] {
		if c != classes[0] {
			return classMixed
		}
	}
	return classes[0]
}

// deriveCardType names a checked card body's card_type from its media
// class (IMAGE, VIDEO, MIXED_MEDIA), its media component and its
// destination.
func deriveCardType(body *componentBody, class string) string {
	if body.Slides != nil {
		return class + "_MULTI_DEST_CAROUSEL_WEBSITE"
	}
	dest := destinationWebsite
	if body.Components[1].Type == typeButton {
		dest = destinationApp
	}
	switch {
	case body.Components[0].Type == typeMedia:
		return class + "_" + dest
	case class == classMixed:
		return classMixed + "_SINGLE_DEST_CAROUSEL_" + dest
	default:
		return class + "_CAROUSEL_" + dest
	}
}
