package media

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"unicode/utf8"

	"github.com/aviary-dev/aviary/storage"
)

// cueTiming matches an SRT ("00:00:01,000 --> 00:00:04,000") or WebVTT
// ("00:01.000 --> 00:04.000", hours optional) cue timing line.
var cueTiming = regexp.MustCompile(`^\s*(\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}\s+-->\s+(\d+:)?\d{1,2}:\d{2}[.,]\d{1,3}`)

// maxSubtitleLine bounds one line of a subtitles file.
const maxSubtitleLine = 64 << 10

var utf8BOM = []byte("\xef\xbb\xbf")

// subtitles checks that the upload is UTF-8 text with at least one cue
// timing (a WebVTT file starting with its header) and stores it as is.
func (p *Processor) subtitles(ctx context.Context, j *job) (storage.MediaResult, error) {
	if err := checkSubtitles(j.original, j.media.MediaType); err != nil {
		return storage.MediaResult{}, err
	}
	ext := "srt"
	if j.media.MediaType == "text/vtt" {
		ext = "vtt"
	}
	key := storage.MediaOutputKey(j.media.ID, ext)
	if err := p.putFile(ctx, key, j.original, j.media.MediaType); err != nil {
		return storage.MediaResult{}, err
	}
	return storage.MediaResult{OutputType: j.media.MediaType, OutputKey: key}, nil
}

// checkSubtitles reads the file at path line by line.
func checkSubtitles(path, mediaType string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open working file: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4<<10), maxSubtitleLine)
	line, cues := 0, 0
	for sc.Scan() {
		text := sc.Bytes()
		if line++; line == 1 {
			text = bytes.TrimPrefix(text, utf8BOM)
			if mediaType == "text/vtt" && !bytes.HasPrefix(text, []byte("WEBVTT")) {
				return invalid("A text/vtt file must start with WEBVTT.")
			}
		}
		if !utf8.Valid(text) {
			return invalid("The file is not UTF-8 text (line %d).", line)
		}
		if cueTiming.Match(text) {
			cues++
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return invalid("Line %d is longer than %d bytes.", line+1, maxSubtitleLine)
	}
	if sc.Err() != nil {
		return fmt.Errorf("read working file: %w", sc.Err())
	}
	if cues == 0 {
		return invalid("The file has no cue timings (a line such as 00:00:01,000 --> 00:00:04,000).")
	}
	return nil
}
