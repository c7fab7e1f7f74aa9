package storage

import "time"

// APIError is one 4xx or 5xx answer the API gave, as the console's recent
// errors page lists it (storage/opsredis keeps the newest per app).
type APIError struct {
	At        time.Time `json:"at"`
	AppID     int64     `json:"app_id"` // 0: no app (the request was not authenticated)
	Method    string    `json:"method"`
	Path      string    `json:"path"`
	Status    int       `json:"status"`
	Type      string    `json:"type,omitempty"` // the problem's type URI
	Title     string    `json:"title,omitempty"`
	RequestID string    `json:"request_id,omitempty"`
}

// StatusClasses are the answers' status classes the request counters keep,
// in order: 1xx-2xx, 3xx, 4xx, 5xx.
var StatusClasses = []string{"2xx", "3xx", "4xx", "5xx"}

// StatusClass is the index in StatusClasses of a status (1xx counts as 2xx).
func StatusClass(status int) int {
	switch {
	case status >= 500:
		return 3
	case status >= 400:
		return 2
	case status >= 300:
		return 1
	}
	return 0
}

// RequestMinute is one minute's answers by status class (StatusClasses).
type RequestMinute struct {
	Minute  time.Time
	ByClass [4]int64
}

// JobMinute is one queue's tasks run in one minute: processed counts every
// run that ended, failed those that ended in an error (as asynq counts).
type JobMinute struct {
	Minute            time.Time
	Queue             string
	Processed, Failed int64
}
