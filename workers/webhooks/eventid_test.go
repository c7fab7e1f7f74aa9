package webhooks

import (
	"testing"

	"github.com/aviary-dev/aviary/storage"
)

// TestEventID: x-aviary-event-id is a post delivery's seq and an activity
// delivery's event_uuid (not its seq, which several deliveries share).
func TestEventID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		kind string
		body string
		want string
	}{
		{"post", storage.DeliveryPost, `{"data":{"id":"1"}}`, "17"},
		{"activity", storage.DeliveryActivity, `{"data":{"event_uuid":"8123456789012345678","event_type":"post.create"}}`, "8123456789012345678"},
		{"activity without envelope", storage.DeliveryActivity, `{}`, "17"},
		{"replay status", storage.DeliveryReplayStatus, `{"replay_job_id":"1"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			row := storage.WebhookDelivery{Kind: tt.kind, EventSeq: 17}
			if got := eventID(row, []byte(tt.body)); got != tt.want {
				t.Errorf("eventID(%s, %s) = %q, want %q", tt.kind, tt.body, got, tt.want)
			}
		})
	}
}
