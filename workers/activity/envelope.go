package activity

import (
	"encoding/json"

	"github.com/aviary-dev/aviary/events"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

type envelopeData struct {
	EventUUID string          `json:"event_uuid"`
	Filter    envelopeFilter  `json:"filter"`
	EventType string          `json:"event_type"`
	Tag       string          `json:"tag,omitempty"`
	Payload   json.RawMessage `json:"payload"`
	Includes  json.RawMessage `json:"includes,omitempty"`
}

type envelopeFilter struct {
	UserID    string `json:"user_id,omitempty"`
	Keyword   string `json:"keyword,omitempty"`
	Direction string `json:"direction,omitempty"`
}

// envelope is the delivery body of d for sub: {data:{event_uuid
// (EventUUID of the delivery), filter (the subscription's), event_type (its type), tag,
// payload, includes}}, as the stream's line (without "\r\n") and the
// webhook's body.
func envelope(ev events.Event, d Derived, sub storage.ActivitySubscription, p *shown) ([]byte, error) {
	f := envelopeFilter{Keyword: sub.FilterKeyword, Direction: d.Direction}
	if sub.FilterUserID != 0 {
		f.UserID = ids.Format(sub.FilterUserID)
	}
	data := envelopeData{EventUUID: EventUUID(ev.Seq, d.Type, d.UserID, d.Direction, sub.ID), Filter: f, EventType: d.Type, Tag: sub.Tag, Payload: p.Payload}
	if len(p.Includes) > 0 && string(p.Includes) != "null" && string(p.Includes) != "{}" {
		data.Includes = p.Includes
	}
	return json.Marshal(map[string]envelopeData{"data": data})
}
