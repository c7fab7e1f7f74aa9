package cards

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

// TestRenderMediaURLs: with a public media URL, a video conversation
// card's poster is the video's first frame unless a poster was chosen,
// and a video poll shows its video and poster.
func TestRenderMediaURLs(t *testing.T) {
	m := New(Deps{MediaURLs: render.NewMediaURLs("https://media.test/")})
	video := cardMedia{Key: "13_1", Kind: storage.MediaVideo, OwnerID: 7, Width: 1920, Height: 1080, DurationMS: 8000,
		OutputKey: "media/1/media.mp4", PreviewKey: "media/1/preview.jpg"}
	poster := cardMedia{Key: "3_2", Kind: storage.MediaPhoto, Width: 1280, Height: 720, OutputKey: "media/2/media.jpg"}
	now := time.Now()
	card := func(kind string, body any) storage.Card {
		raw, err := encodeBody(body)
		if err != nil {
			t.Fatal(err)
		}
		return storage.Card{ID: "x1", Kind: kind, CardType: "T", CardURI: "card://x1", Body: raw, CreatedAt: now, UpdatedAt: now}
	}
	tests := []struct {
		name string
		got  *string
		want string
	}{
		{"default poster", m.renderConversation(card(storage.CardVideoConversation, conversationBody{Media: video})).PosterMediaURL, "https://media.test/media/13_1/preview.jpg"},
		{"chosen poster", m.renderConversation(card(storage.CardVideoConversation, conversationBody{Media: video, Poster: &poster})).PosterMediaURL, "https://media.test/media/3_2/media.jpg"},
		{"conversation media", m.renderConversation(card(storage.CardVideoConversation, conversationBody{Media: video})).MediaURL, "https://media.test/media/13_1/media.mp4"},
		{"poll video", m.renderPoll(card(storage.CardPoll, pollBody{Media: &video})).VideoURL, "https://media.test/media/13_1/media.mp4"},
		{"poll poster", m.renderPoll(card(storage.CardPoll, pollBody{Media: &video})).VideoPosterURL, "https://media.test/media/13_1/preview.jpg"},
		{"poll seconds", m.renderPoll(card(storage.CardPoll, pollBody{Media: &video})).ContentDurationSeconds, "8"},
		{"poll ratio", m.renderPoll(card(storage.CardPoll, pollBody{Media: &video})).VideoWidth, "16"},
	}
	for _, tc := range tests {
		if tc.got == nil || *tc.got != tc.want {
			t.Errorf("%s: got %v, want %s", tc.name, tc.got, tc.want)
		}
	}
	if got := New(Deps{}).renderConversation(card(storage.CardVideoConversation, conversationBody{Media: video})); got.PosterMediaURL != nil || got.MediaURL != nil {
		t.Errorf("without MediaURLs the URLs are null: %+v", got)
	}
}

// TestDeriveCardType: the card_type of each media class, media component
// and destination.
func TestDeriveCardType(t *testing.T) {
	media := component{Type: typeMedia}
	swipeable := component{Type: typeSwipeable}
	details, button := component{Type: typeDetails}, component{Type: typeButton}
	tests := []struct {
		body  componentBody
		class string
		want  string
	}{
		{componentBody{Components: []component{media, details}}, classImage, "IMAGE_WEBSITE"},
		{componentBody{Components: []component{media, button}}, classVideo, "VIDEO_APP"},
		{componentBody{Components: []component{swipeable, button}}, classMixed, "MIXED_MEDIA_SINGLE_DEST_CAROUSEL_APP"},
		{componentBody{Components: []component{swipeable, details}}, classImage, "IMAGE_CAROUSEL_WEBSITE"},
		{componentBody{Slides: [][]component{{media, details}}}, classMixed, "MIXED_MEDIA_MULTI_DEST_CAROUSEL_WEBSITE"},
	}
	for _, tc := range tests {
		if got := deriveCardType(&tc.body, tc.class); got != tc.want {
			t.Errorf("%+v %s: got %s, want %s", tc.body, tc.class, got, tc.want)
		}
	}
	if got := class([]string{classImage, classImage}); got != classImage {
		t.Errorf("class of images = %s", got)
	}
	if got := class([]string{classImage, classVideo}); got != classMixed {
		t.Errorf("class of image and video = %s", got)
	}
}
