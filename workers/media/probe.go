package media

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aviary-dev/aviary/internal/logctx"
)

// probeResult is the part of ffprobe's JSON (-show_format -show_streams)
// processing reads.
type probeResult struct {
	Streams []probeStream `json:"streams"`
	Format  struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

type probeStream struct {
	Index     int    `json:"index"`
	CodecType string `json:"codec_type"`
	CodecName string `json:"codec_name"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Duration  string `json:"duration"`
	// ReadPackets counts the stream's packets, read by the demuxer
	// without decoding (a packet is a frame of a video stream): "" when
	// not counted.
	ReadPackets string `json:"nb_read_packets"`
	// AvgFrameRate is the container's average frame rate ("30000/1001",
	// "0/0" when unknown).
	AvgFrameRate string `json:"avg_frame_rate"`
	Disposition  struct {
		AttachedPic int `json:"attached_pic"`
	} `json:"disposition"`
	Tags struct {
		Rotate string `json:"rotate"`
	} `json:"tags"`
	SideData []struct {
		Rotation float64 `json:"rotation"`
	} `json:"side_data_list"`
}

// videoInfo is what the probe found: the streams transcoded, the duration
// (0: unknown) and the displayed dimensions (rotation applied).
type videoInfo struct {
	video    probeStream
	audio    *probeStream
	duration time.Duration
	width    int
	height   int
	frames   int // the video stream's packets (frames); 0 when not counted
	fps      float64
}

// pixels is width x height x frames: the work a transcode does.
func (v videoInfo) pixels() int64 {
	return int64(v.width) * int64(v.height) * int64(max(v.frames, 1))
}

// pixelRate is width x height x frames per second: the frames counted
// over the duration (the work, whatever a header claims), or the
// container's average rate when either is unknown.
func (v videoInfo) pixelRate() float64 {
	fps := v.fps
	if v.frames > 0 && v.duration > 0 {
		fps = float64(v.frames) / v.duration.Seconds()
	}
	return float64(v.width) * float64(v.height) * fps
}

// containerFormats are the ffprobe format names each video media_type may
// hold (format_name lists every name of the demuxer it used).
var containerFormats = map[string][]string{
	"video/mp4": {"mp4", "mov"}, "video/quicktime": {"mov", "mp4"}, "video/webm": {"webm", "matroska"},
	"video/mp2t": {"mpegts"}, "image/gif": {"gif"},
}

// probe runs ffprobe on path. Bytes ffprobe cannot read are a client error.
func (p *Processor) probe(ctx context.Context, path, mediaType string) (probeResult, error) {
	// -count_packets counts the frames: the demuxer reads the file, no
	// frame is decoded (the work budget needs the real count, not what a
	// header claims).
	args := []string{"-v", "error", "-print_format", "json", "-show_format", "-show_streams", "-count_packets"}
	cmd := command(ctx, p.ffprobe(), append(args, path)...)
	stderr := &tailBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.Output()
	switch {
	case ctx.Err() != nil:
		return probeResult{}, fmt.Errorf("ffprobe: %w", context.Cause(ctx))
	case err != nil && refusedInput(err, stderr.String()):
		logctx.OrDefault(p.Logger).InfoContext(ctx, "ffprobe rejected the upload", "stderr", stderr.String())
		return probeResult{}, invalid("The file could not be read as %s.", mediaType)
	case err != nil:
		return probeResult{}, fmt.Errorf("run ffprobe: %w: %s", err, stderr.String())
	}
	var res probeResult
	if err := json.Unmarshal(out, &res); err != nil {
		return probeResult{}, fmt.Errorf("decode ffprobe output: %w", err)
	}
	return res, nil
}

// inspect checks the probe against media_type and picks the streams.
func inspect(res probeResult, mediaType string) (videoInfo, error) {
	names := strings.Split(res.Format.FormatName, ",")
	if !slices.ContainsFunc(containerFormats[mediaType], func(f string) bool { return slices.Contains(names, f) }) {
		return videoInfo{}, invalid("The file is %s, not %s.", describeFormat(res.Format.FormatName), mediaType)
	}
	var info videoInfo
	found := false
	for i, s := range res.Streams {
		switch {
		case s.CodecType == "video" && s.Disposition.AttachedPic == 0 && !found:
			info.video, found = s, true
		case s.CodecType == "audio" && info.audio == nil && mediaType != "image/gif":
			info.audio = &res.Streams[i]
		}
	}
	if !found {
		return videoInfo{}, invalid("The file has no video stream.")
	}
	if info.video.Width <= 0 || info.video.Height <= 0 {
		return videoInfo{}, invalid("The video stream has no dimensions.")
	}
	info.width, info.height = info.video.Width, info.video.Height
	if quarterTurn(info.video) {
		info.width, info.height = info.height, info.width
	}
	info.frames, _ = strconv.Atoi(info.video.ReadPackets)
	info.fps = parseRate(info.video.AvgFrameRate)
	info.duration = parseSeconds(res.Format.Duration)
	if info.duration <= 0 {
		info.duration = parseSeconds(info.video.Duration)
	}
	return info, nil
}

func describeFormat(name string) string {
	if name == "" {
		return "of an unknown format"
	}
	return "a " + name + " file"
}

// quarterTurn reports whether the stream is displayed rotated by 90 or
// 270 degrees (ffmpeg applies the rotation when it transcodes).
func quarterTurn(s probeStream) bool {
	rot := 0.0
	if r, err := strconv.ParseFloat(s.Tags.Rotate, 64); err == nil {
		rot = r
	}
	for _, sd := range s.SideData {
		if sd.Rotation != 0 {
			rot = sd.Rotation
		}
	}
	return int(math.Abs(rot))%180 == 90
}

// parseSeconds reads ffprobe's decimal seconds ("12.345000"); anything
// else ("N/A", "") is 0.
func parseSeconds(s string) time.Duration {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) {
		return 0
	}
	return time.Duration(f * float64(time.Second))
}

// parseRate reads ffprobe's "num/den" frame rate; anything else ("0/0",
// "") is 0.
func parseRate(s string) float64 {
	num, den, ok := strings.Cut(s, "/")
	n, err1 := strconv.ParseFloat(num, 64)
	d, err2 := strconv.ParseFloat(den, 64)
	if !ok || err1 != nil || err2 != nil || d <= 0 || n <= 0 || math.IsInf(n/d, 0) {
		return 0
	}
	return n / d
}

// tailBuffer keeps the last 4 KiB written to it (a command's stderr).
type tailBuffer struct{ b []byte }

const tailSize = 4 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = append([]byte(nil), t.b[len(t.b)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return strings.TrimSpace(string(t.b)) }
