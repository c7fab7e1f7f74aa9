package media

import (
	"bytes"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"

	"github.com/aviary-dev/aviary/storage"
)

// testImage is a w x h gradient; its top-left quarter is half transparent.
func testImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			a := uint8(255)
			if x < w/2 && y < h/2 {
				a = 128
			}
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(x * 255 / w), G: uint8(y * 255 / h), B: 90, A: a})
		}
	}
	return img
}

// encodeImage encodes a w x h test image with Go's encoders.
func encodeImage(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	img := testImage(w, h)
	var err error
	switch format {
	case "jpeg":
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80})
	case "png":
		err = png.Encode(&buf, img)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	case "bmp":
		err = bmp.Encode(&buf, img)
	case "tiff":
		err = tiff.Encode(&buf, img, nil)
	default:
		t.Fatalf("no encoder for %s", format)
	}
	if err != nil {
		t.Fatalf("encode %s: %v", format, err)
	}
	return buf.Bytes()
}

// animatedGIF has frames frames of w x h, 100 ms each.
func animatedGIF(t *testing.T, w, h, frames int) []byte {
	t.Helper()
	anim := &gif.GIF{}
	for i := range frames {
		frame := image.NewPaletted(image.Rect(0, 0, w, h), palette.Plan9)
		for y := range h {
			for x := range w {
				frame.SetColorIndex(x, y, uint8((x+y+i*40)%256))
			}
		}
		anim.Image = append(anim.Image, frame)
		anim.Delay = append(anim.Delay, 10)
	}
	var buf bytes.Buffer
	if err := gif.EncodeAll(&buf, anim); err != nil {
		t.Fatalf("encode GIF: %v", err)
	}
	return buf.Bytes()
}

func TestProcessPhotos(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	jpg := encodeImage(t, "jpeg", 120, 80)
	webp := generated(t, "photo.webp", "-f", "lavfi", "-i", "testsrc=size=50x30", "-frames:v", "1", "-c:v", "libwebp")
	wide := encodeImage(t, "png", 8193, 2)
	tests := []struct {
		name       string
		mediaType  string
		category   string
		data       []byte
		sizes      []int
		wantW      int
		wantH      int
		wantFormat string // format of the normalised copy
		wantCode   int    // failed with this code
		wantMsg    string
	}{
		{name: "jpeg", mediaType: "image/jpeg", data: jpg, sizes: []int{100, len(jpg) - 150, 50}, wantW: 120, wantH: 80, wantFormat: "jpeg"},
		{name: "pjpeg", mediaType: "image/pjpeg", category: storage.MediaDMImage, data: jpg, wantW: 120, wantH: 80, wantFormat: "jpeg"},
		{name: "png stays png", mediaType: "image/png", data: encodeImage(t, "png", 33, 17), wantW: 33, wantH: 17, wantFormat: "png"},
		{name: "gif photo", mediaType: "image/gif", category: storage.MediaTweetImage, data: encodeImage(t, "gif", 20, 10), wantW: 20, wantH: 10, wantFormat: "jpeg"},
		{name: "bmp", mediaType: "image/bmp", data: encodeImage(t, "bmp", 31, 7), wantW: 31, wantH: 7, wantFormat: "jpeg"},
		{name: "tiff", mediaType: "image/tiff", data: encodeImage(t, "tiff", 16, 16), wantW: 16, wantH: 16, wantFormat: "jpeg"},
		{name: "webp", mediaType: "image/webp", data: webp, wantW: 50, wantH: 30, wantFormat: "jpeg"},

		{name: "png declared as jpeg", mediaType: "image/jpeg", data: encodeImage(t, "png", 10, 10),
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "The file is a PNG image, but media_type is image/jpeg."},
		{name: "not an image", mediaType: "image/png", data: []byte("these bytes are no picture at all"),
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "The file is not a PNG image (media_type image/png)."},
		{name: "truncated jpeg", mediaType: "image/jpeg", data: jpg[:len(jpg)/2],
			wantCode: storage.MediaErrorInvalidMedia, wantMsg: "The JPEG image could not be decoded"},
		{name: "too wide", mediaType: "image/png", data: wide,
			wantCode: storage.MediaErrorTooLarge, wantMsg: "The image is 8193x2 pixels; the largest allowed is 8192x8192."},
		{name: "too many bytes", mediaType: "image/jpeg", data: append(bytes.Clone(jpg), make([]byte, 5<<20)...),
			wantCode: storage.MediaErrorTooLarge, wantMsg: "the limit for tweet_image is 5242880 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := e.record(t, upload{mediaType: tc.mediaType, category: tc.category, data: tc.data, sizes: tc.sizes, finalize: true})
			keys := e.segmentKeys(t, m.ID)
			p, _ := e.processor(t, nil)
			err := process(t, p, m.ID)
			e.wantSegmentsGone(t, m, keys)
			if original, _ := e.object(t, storage.MediaOriginalKey(m.ID)); !bytes.Equal(original, tc.data) {
				t.Errorf("original holds %d bytes, want the %d uploaded", len(original), len(tc.data))
			}
			if tc.wantCode != 0 {
				name := ErrorNameInvalidMedia
				if tc.wantCode == storage.MediaErrorTooLarge {
					name = ErrorNameLimitExceeded
				}
				e.wantFailed(t, err, m.ID, tc.wantCode, name, tc.wantMsg)
				return
			}
			if err != nil {
				t.Fatalf("ProcessTask: %v", err)
			}
			e.wantPhoto(t, m.ID, tc.wantW, tc.wantH, tc.wantFormat)
		})
	}
}

// wantPhoto checks a processed photo and its normalised copy.
func (e *env) wantPhoto(t *testing.T, id int64, w, h int, format string) {
	t.Helper()
	m := e.load(t, id)
	ext, typ := "jpg", "image/jpeg"
	if format == "png" {
		ext, typ = "png", "image/png"
	}
	if m.State != storage.MediaSucceeded || m.ProgressPercent != 100 || m.Width != w || m.Height != h ||
		m.OutputType != typ || m.OutputKey != storage.MediaOutputKey(id, ext) || m.ErrorCode != 0 {
		t.Fatalf("media = %s %d%% %dx%d %s %s, want succeeded 100%% %dx%d %s %s", m.State, m.ProgressPercent, m.Width,
			m.Height, m.OutputType, m.OutputKey, w, h, typ, storage.MediaOutputKey(id, ext))
	}
	data, ctype := e.object(t, m.OutputKey)
	cfg, got, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil || got != format || cfg.Width != w || cfg.Height != h || ctype != typ {
		t.Errorf("output = %s %dx%d (%s, err %v), want %s %dx%d (%s)", got, cfg.Width, cfg.Height, ctype, err, format, w, h, typ)
	}
}

// TestPhotoDecodeBudget: a photo whose decode could never fit the worker's
// budget fails with code 2 before any pixel is decoded; one that fits is
// processed, and gives its share back (a second one fits after it).
func TestPhotoDecodeBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p, _ := e.processor(t, nil)
	p.DecodeBudget = decodeCost(image.Config{Width: 50, Height: 50, ColorModel: color.NRGBAModel})
	for i, tc := range []struct {
		side    int
		wantMsg string
	}{
		{50, ""},
		{50, ""},
		{200, "The image is 200x200 pixels, too large to process"},
	} {
		data := encodeImage(t, "png", tc.side, tc.side)
		m := e.record(t, upload{mediaType: "image/png", data: data, finalize: true})
		err := process(t, p, m.ID)
		if tc.wantMsg != "" {
			e.wantFailed(t, err, m.ID, storage.MediaErrorTooLarge, ErrorNameLimitExceeded, tc.wantMsg)
			continue
		}
		if err != nil {
			t.Fatalf("photo %d: %v", i, err)
		}
		e.wantPhoto(t, m.ID, tc.side, tc.side, "png")
	}
}

func TestDecodeCost(t *testing.T) {
	for _, tc := range []struct {
		model color.Model
		want  int64
	}{
		{color.NRGBAModel, 10 * 20 * 4 * 3},
		{color.YCbCrModel, 10 * 20 * 4 * 3},
		{color.NRGBA64Model, 10 * 20 * 8 * 3},
		{color.Gray16Model, 10 * 20 * 8 * 3},
	} {
		if got := decodeCost(image.Config{Width: 10, Height: 20, ColorModel: tc.model}); got != tc.want {
			t.Errorf("decodeCost(%T) = %d, want %d", tc.model, got, tc.want)
		}
	}
}
