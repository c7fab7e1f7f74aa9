package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

// Seeded photos (docs/state.md, "Seed").
const (
	seedMediaEvery   = 4 // every 4th post carries photos
	seedMaxPhotos    = 2 // per post with photos
	seedPhotoHeight  = 64
	seedPhotoPattern = 4 // horizontal, vertical, diagonal, checks
)

// seedPhotoWidths are the widths a seeded photo takes (square or 3:2).
var seedPhotoWidths = []int{64, 96}

// newMediaRand is the random source of the seeded photos: its own, so the
// users, texts and graph of a seed stay what they were without photos.
func newMediaRand(seed int64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed)^0x3ed1a, uint64(seed)))
}

// seedPhoto draws a small PNG from rnd: a two-colour gradient or pattern.
func seedPhoto(rnd *rand.Rand) ([]byte, int, int, error) {
	w, h := seedPhotoWidths[rnd.IntN(len(seedPhotoWidths))], seedPhotoHeight
	from, to := randomColor(rnd), randomColor(rnd)
	pattern := rnd.IntN(seedPhotoPattern)
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetNRGBA(x, y, blend(from, to, patternShare(pattern, x, y, w, h)))
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, 0, 0, fmt.Errorf("encode seed photo: %w", err)
	}
	return buf.Bytes(), w, h, nil
}

func randomColor(rnd *rand.Rand) color.NRGBA {
	return color.NRGBA{R: uint8(rnd.IntN(256)), G: uint8(rnd.IntN(256)), B: uint8(rnd.IntN(256)), A: 255}
}

// patternShare is how much of the second colour pixel (x, y) takes, 0-255.
func patternShare(pattern, x, y, w, h int) int {
	switch pattern {
	case 0:
		return x * 255 / (w - 1)
	case 1:
		return y * 255 / (h - 1)
	case 2:
		return (x + y) * 255 / (w + h - 2)
	}
	if (x/8+y/8)%2 == 0 {
		return 0
	}
	return 255
}

func blend(a, b color.NRGBA, share int) color.NRGBA {
	mix := func(p, q uint8) uint8 { return uint8((int(p)*(255-share) + int(q)*share) / 255) }
	return color.NRGBA{R: mix(a.R, b.R), G: mix(a.G, b.G), B: mix(a.B, b.B), A: 255}
}

// photos makes the photos of the i-th post, written by author with app at
// at: none unless i is a multiple of seedMediaEvery.
func (s *seeder) photos(ctx context.Context, i int, app storage.App, author storage.User, at time.Time) ([]int64, error) {
	if i%seedMediaEvery != 0 {
		return nil, nil
	}
	var ids []int64
	for range 1 + s.mrnd.IntN(seedMaxPhotos) {
		data, w, h, err := seedPhoto(s.mrnd)
		if err != nil {
			return nil, err
		}
		m, err := s.photo(ctx, app, author, data, w, h, at)
		if err != nil {
			return nil, fmt.Errorf("seed photo of post %d: %w", i, err)
		}
		ids = append(ids, m.ID)
		s.out.Media++
	}
	return ids, nil
}

// photo stores data as the processed copy of a new photo of author, then
// takes its media record through the upload's states to succeeded at at,
// as an upload the media worker processed: output key media/<id>/media.png,
// width and height, the segment record forgotten once done.
func (s *seeder) photo(ctx context.Context, app storage.App, author storage.User, data []byte, w, h int, at time.Time) (storage.Media, error) {
	id, err := s.db.NextID(ctx)
	if err != nil {
		return storage.Media{}, err
	}
	key := storage.MediaOutputKey(id, "png")
	if err := s.blobs.Put(ctx, key, bytes.NewReader(data), int64(len(data)), "image/png"); err != nil {
		return storage.Media{}, fmt.Errorf("store %s: %w", key, err)
	}
	m := storage.Media{ID: id, Key: storage.MediaKey(storage.MediaPhoto, id), OwnerID: author.ID, AppID: app.ID,
		MediaType: "image/png", Category: storage.MediaTweetImage, Kind: storage.MediaPhoto, TotalBytes: int64(len(data)),
		CreatedAt: at, ExpiresAt: at.Add(storage.MediaUploadTTL)}
	if _, err := s.db.CreateMedia(ctx, m); err != nil {
		return storage.Media{}, err
	}
	seg := storage.MediaSegment{MediaID: id, Index: 0, Key: storage.MediaSegmentKey(id, "seed"), Size: m.TotalBytes}
	if _, err := s.db.AddMediaSegment(ctx, seg, at); err != nil {
		return storage.Media{}, err
	}
	if _, err := s.db.FinalizeMedia(ctx, id, at); err != nil {
		return storage.Media{}, err
	}
	if _, err := s.db.StartMediaProcessing(ctx, id, at); err != nil {
		return storage.Media{}, err
	}
	res := storage.MediaResult{Width: w, Height: h, OutputType: "image/png", OutputKey: key}
	if err := s.db.CompleteMedia(ctx, id, res, at); err != nil {
		return storage.Media{}, err
	}
	if err := s.db.DeleteMediaSegments(ctx, id); err != nil {
		return storage.Media{}, err
	}
	return s.db.Media(ctx, id)
}
