package media

import (
	"time"

	"github.com/aviary-dev/aviary/api/httpx"
	"github.com/aviary-dev/aviary/storage"
)

type initializeResponse struct {
	Data initializeObject `json:"data"`
}

type initializeObject struct {
	ID               string `json:"id"`
	MediaKey         string `json:"media_key"`
	ExpiresAfterSecs int64  `json:"expires_after_secs"`
}

type appendResponse struct {
	Data appendObject `json:"data"`
}

type appendObject struct {
	// ExpiresAt is the upload session's expiry in epoch seconds.
	ExpiresAt int64 `json:"expires_at"`
}

// mediaResponse answers finalize and STATUS.
type mediaResponse struct {
	Data mediaObject `json:"data"`
}

type mediaObject struct {
	ID               string          `json:"id"`
	MediaKey         string          `json:"media_key"`
	Size             int64           `json:"size"`
	ExpiresAfterSecs int64           `json:"expires_after_secs"`
	ProcessingInfo   *processingInfo `json:"processing_info,omitempty"`
	Image            *imageInfo      `json:"image,omitempty"`
	Video            *videoInfo      `json:"video,omitempty"`
}

// processingInfo is where processing is: check_after_secs only while it is
// not final, progress_percent once a worker started (the platform shows
// none while pending), error only when it failed.
type processingInfo struct {
	State           storage.MediaState `json:"state"`
	CheckAfterSecs  int                `json:"check_after_secs,omitempty"`
	ProgressPercent *int               `json:"progress_percent,omitempty"`
	Error           *processingError   `json:"error,omitempty"`
}

// processingError is the platform's v1.1 processing_info.error shape.
type processingError struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

type imageInfo struct {
	W         int    `json:"w"`
	H         int    `json:"h"`
	ImageType string `json:"image_type"`
}

type videoInfo struct {
	VideoType string `json:"video_type"`
}

// render shows finalized media m at now.
func render(m storage.Media, now time.Time) mediaObject {
	o := mediaObject{ID: httpx.FormatID(m.ID), MediaKey: m.Key, Size: m.TotalBytes, ExpiresAfterSecs: secondsUntil(m.ExpiresAt, now)}
	if m.State != storage.MediaUploading {
		o.ProcessingInfo = renderProcessing(m)
	}
	if m.State != storage.MediaSucceeded {
		return o
	}
	switch m.Kind {
	case storage.MediaPhoto:
		o.Image = &imageInfo{W: m.Width, H: m.Height, ImageType: outputType(m)}
	case storage.MediaVideo, storage.MediaAnimatedGIF:
		o.Video = &videoInfo{VideoType: outputType(m)}
	}
	return o
}

func renderProcessing(m storage.Media) *processingInfo {
	p := &processingInfo{State: m.State}
	if !m.State.Final() {
		p.CheckAfterSecs = int(storage.MediaCheckAfter / time.Second)
	}
	if m.State != storage.MediaPending {
		percent := m.ProgressPercent
		p.ProgressPercent = &percent
	}
	if m.State == storage.MediaFailed {
		p.Error = &processingError{Code: m.ErrorCode, Name: m.ErrorName, Message: m.ErrorMessage}
	}
	return p
}

// outputType is the MIME type of the processed copy, or the declared one
// when processing recorded none.
func outputType(m storage.Media) string {
	if m.OutputType != "" {
		return m.OutputType
	}
	return m.MediaType
}

// secondsUntil is how many seconds, rounded up, are left before t at now
// (0 once it passed): a session of storage.MediaUploadTTL starts at 86400.
func secondsUntil(t, now time.Time) int64 {
	return max(int64((t.Sub(now)+time.Second-1)/time.Second), 0)
}
