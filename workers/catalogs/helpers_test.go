package catalogs

import (
	"bytes"
	"encoding/binary"
	"github.com/aviary-dev/aviary/internal/outbound"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"net/http"
	"net/http/httptest"
	"testing"

	"golang.org/x/image/bmp"
)

// encodeImage makes a w×h image in format: png, jpeg, gif, bmp, or webp (a
// lossless WEBP header: enough for DecodeConfig, which is all the checker
// decodes).
func encodeImage(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	if format == "webp" {
		return webpHeader(w, h)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: uint8(x), G: 80, B: 160, A: 255})
	}
	var buf bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&buf, img)
	case "jpeg":
		err = jpeg.Encode(&buf, img, nil)
	case "gif":
		err = gif.Encode(&buf, img, nil)
	case "bmp":
		err = bmp.Encode(&buf, img)
	default:
		t.Fatalf("unknown format %q", format)
	}
	if err != nil {
		t.Fatalf("encode %s: %v", format, err)
	}
	return buf.Bytes()
}

// webpHeader is a RIFF WEBP file with a VP8L chunk header of w×h.
func webpHeader(w, h int) []byte {
	bits := uint32(w-1) | uint32(h-1)<<14
	chunk := append([]byte{0x2f}, binary.LittleEndian.AppendUint32(nil, bits)...)
	chunk = append(chunk, 0) // pad to an even length
	var b []byte
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, uint32(4+8+len(chunk)))
	b = append(b, "WEBP"...)
	b = append(b, "VP8L"...)
	b = binary.LittleEndian.AppendUint32(b, 5)
	return append(b, chunk...)
}

// allowServer starts h and returns it with an allow-list holding it.
func allowServer(t testing.TB, h http.Handler) (*httptest.Server, outbound.AllowList) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	allow, err := outbound.ParseAllowList(srv.Listener.Addr().String())
	if err != nil {
		t.Fatalf("allow-list: %v", err)
	}
	return srv, allow
}

// endless streams zeros until the client goes away.
func endless(w http.ResponseWriter, r *http.Request) {
	chunk := make([]byte, 32<<10)
	for r.Context().Err() == nil {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}
