package media

import (
	"bufio"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	// Decoders of the photo formats the API accepts (image.Decode).
	_ "image/gif"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	"github.com/aviary-dev/aviary/storage"
)

// imageFormats maps a photo media_type to the name Go's image package
// gives the format it detects.
var imageFormats = map[string]string{
	"image/jpeg": "jpeg", "image/pjpeg": "jpeg", "image/png": "png", "image/gif": "gif",
	"image/webp": "webp", "image/bmp": "bmp", "image/tiff": "tiff",
}

// jpegQuality is the quality of normalised JPEG copies.
const jpegQuality = 90

func (p *Processor) maxImageSide() int {
	if p.MaxImageSide > 0 {
		return p.MaxImageSide
	}
	return 8192
}

// photo decodes the upload, checks it is the declared format and within the
// dimension limit, and stores a normalised copy: PNG stays PNG, every other
// format becomes JPEG.
func (p *Processor) photo(ctx context.Context, j *job) (storage.MediaResult, error) {
	cfg, err := p.photoConfig(j.original, j.media.MediaType)
	if err != nil {
		return storage.MediaResult{}, err
	}
	release, err := p.reserveDecode(ctx, cfg)
	if err != nil {
		return storage.MediaResult{}, err
	}
	defer release()
	img, err := decodePhoto(j.original, imageFormats[j.media.MediaType])
	if err != nil {
		return storage.MediaResult{}, err
	}
	ext, outType := "jpg", "image/jpeg"
	if imageFormats[j.media.MediaType] == "png" {
		ext, outType = "png", "image/png"
	}
	out := filepath.Join(j.dir, "media."+ext)
	if err := writeImage(out, img, ext); err != nil {
		return storage.MediaResult{}, err
	}
	key := storage.MediaOutputKey(j.media.ID, ext)
	if err := p.putFile(ctx, key, out, outType); err != nil {
		return storage.MediaResult{}, err
	}
	b := img.Bounds()
	return storage.MediaResult{Width: b.Dx(), Height: b.Dy(), OutputType: outType, OutputKey: key}, nil
}

// photoConfig reads the header of the image at path, which must be in the
// format of mediaType and within the dimension limit (checked before any
// pixel is decoded).
func (p *Processor) photoConfig(path, mediaType string) (image.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return image.Config{}, fmt.Errorf("open working file: %w", err)
	}
	defer f.Close()
	want := imageFormats[mediaType]
	cfg, format, err := image.DecodeConfig(bufio.NewReader(f))
	if err != nil {
		return cfg, invalid("The file is not a %s image (media_type %s).", strings.ToUpper(want), mediaType)
	}
	if format != want {
		return cfg, invalid("The file is a %s image, but media_type is %s.", strings.ToUpper(format), mediaType)
	}
	if side := p.maxImageSide(); cfg.Width > side || cfg.Height > side {
		return cfg, tooLarge("The image is %dx%d pixels; the largest allowed is %dx%d.", cfg.Width, cfg.Height, side, side)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return cfg, invalid("The image has no pixels (%dx%d).", cfg.Width, cfg.Height)
	}
	return cfg, nil
}

// decodeCost estimates the memory decoding and re-encoding an image of cfg
// takes: its pixels at 4 bytes (8 for 16-bit colour models) about three
// times over (the decoder's buffers, the image, a flattened copy).
func decodeCost(cfg image.Config) int64 {
	perPixel := int64(4)
	switch cfg.ColorModel {
	case color.RGBA64Model, color.NRGBA64Model, color.Gray16Model:
		perPixel = 8
	}
	return int64(cfg.Width) * int64(cfg.Height) * perPixel * 3
}

// largeDecode is the cost above which a decode hands its memory back to
// the OS when it ends, so one large photo does not leave the worker's RSS
// at its peak.
const largeDecode = 64 << 20

// reserveDecode waits until the worker's decode budget has room for an
// image of cfg and returns the function that gives it back. An image that
// could never fit fails with code 2.
func (p *Processor) reserveDecode(ctx context.Context, cfg image.Config) (func(), error) {
	sem, size := p.decodeBudget()
	cost := decodeCost(cfg)
	if cost > size {
		return nil, tooLarge("The image is %dx%d pixels, too large to process (it needs about %d MiB; at most %d MiB).",
			cfg.Width, cfg.Height, cost>>20, size>>20)
	}
	if err := sem.Acquire(ctx, cost); err != nil {
		return nil, fmt.Errorf("wait for decode memory: %w", err)
	}
	return func() {
		sem.Release(cost)
		if cost > largeDecode {
			debug.FreeOSMemory()
		}
	}, nil
}

// decodePhoto decodes the image at path, of format (its header was
// checked).
func decodePhoto(path, format string) (image.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open working file: %w", err)
	}
	defer f.Close()
	img, _, err := image.Decode(bufio.NewReader(f))
	if err != nil {
		return nil, invalid("The %s image could not be decoded: %v.", strings.ToUpper(format), err)
	}
	return img, nil
}

// writeImage encodes img to a new file at path, as PNG for ext "png" and
// else as JPEG (transparent pixels on white).
func writeImage(path string, img image.Image, ext string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create normalised copy: %w", err)
	}
	w := bufio.NewWriter(f)
	if ext == "png" {
		err = png.Encode(w, img)
	} else {
		err = jpeg.Encode(w, flatten(img), &jpeg.Options{Quality: jpegQuality})
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("encode normalised copy: %w", err)
	}
	return nil
}

// flatten draws an image that may have transparent pixels onto white, as
// JPEG has no alpha channel.
func flatten(img image.Image) image.Image {
	if o, ok := img.(interface{ Opaque() bool }); ok && o.Opaque() {
		return img
	}
	b := img.Bounds()
	out := image.NewRGBA(b)
	draw.Draw(out, b, image.NewUniform(color.White), image.Point{}, draw.Src)
	draw.Draw(out, b, img, b.Min, draw.Over)
	return out
}

// putFile stores the file at path under key.
func (p *Processor) putFile(ctx context.Context, key, path, contentType string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s for upload: %w", filepath.Base(path), err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", filepath.Base(path), err)
	}
	if err := p.Blobs.Put(ctx, key, f, info.Size(), contentType); err != nil {
		return fmt.Errorf("store %s: %w", key, err)
	}
	return nil
}
