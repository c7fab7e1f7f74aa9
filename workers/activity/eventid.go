package activity

import (
	"crypto/sha256"
	"encoding/binary"
	"strconv"
)

// EventUUID is the event_uuid of one delivery (docs/activity.md, "The
// envelope"): a decimal 63-bit digest of the log event's seq, the activity
// event type, the filtered user, the direction and the subscription. One
// log event yields several activity events, and one activity event reaches
// several subscriptions; each pair gets its own id, and the same pair gets
// the same id in every retry, replay, redelivery and on the stream.
func EventUUID(seq int64, eventType string, userID int64, direction string, subscriptionID int64) string {
	h := sha256.New()
	var n [8]byte
	for _, v := range []int64{seq, userID, subscriptionID} {
		binary.BigEndian.PutUint64(n[:], uint64(v))
		h.Write(n[:])
	}
	for _, s := range []string{eventType, direction} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	sum := h.Sum(nil)
	return strconv.FormatUint(binary.BigEndian.Uint64(sum[:8])>>1, 10)
}
