package storage

import "time"

// The deliverer's records (storage/postgres webhook_deliveries.go,
// workers/webhooks.Deliverer; docs/webhooks.md, "Deliveries").

// DeliveryLink is a stream link with what the link sink needs of it.
type DeliveryLink struct {
	WebhookID int64
	AppID     int64
	Query     string
	CreatedAt time.Time
}

// DeliveryClaimQuery selects the webhooks a deliverer claims: live,
// stored valid with a CRC pass at or after ValidSince (the 28 h rule of
// domain/webhooks.EffectiveValid), not leased, and either with a due queue
// head and not failing, or failing with a probe due. Claiming leases them
// to Holder for TTL.
type DeliveryClaimQuery struct {
	Holder     string
	TTL        time.Duration
	ValidSince time.Time
	Limit      int
}

// DeliveryClaim is a webhook a deliverer holds, with its app's consumer
// secret (the signing key).
type DeliveryClaim struct {
	Webhook
	ConsumerSecret string
	// FailingSince is set when the webhook is failing: only a probe goes.
	FailingSince *time.Time
	NextProbeAt  *time.Time
}

// Probe reports whether the claim is a probe of a failing webhook.
func (c DeliveryClaim) Probe() bool { return c.FailingSince != nil }

// DeliveryOutcome is the result of one attempt at a delivery.
type DeliveryOutcome struct {
	DeliveryID int64
	StartedAt  time.Time
	Status     int // 0: no answer
	LatencyMS  int
	Error      string
	// State is the delivery's state after the attempt: DeliveryDelivered,
	// DeliveryPending (retried RetryIn from now) or DeliveryDead (with
	// DeadReason).
	State      string
	DeadReason string
	RetryIn    time.Duration
	// Body replaces the stored body (a replay status is written when
	// sent); nil keeps it.
	Body []byte
	// ReplayJobID with JobState (ReplayComplete or ReplayIncomplete)
	// finishes the running replay job (the outcome of its status).
	ReplayJobID int64
	JobState    string
}

// DeliveryBatch is a batch of outcomes of one webhook's deliveries and
// the webhook's transition after them, recorded in one transaction.
type DeliveryBatch struct {
	WebhookID int64
	Outcomes  []DeliveryOutcome
	// Fail makes the webhook failing (kept failing for a failed probe)
	// with its next probe ProbeIn from now.
	Fail    bool
	ProbeIn time.Duration
	// Recover clears failing and puts every unreachable-dead delivery of
	// the webhook back in its queue (after the outcomes).
	Recover bool
}

// DeliveryStats is the deliveries' state across all webhooks (metrics).
type DeliveryStats struct {
	Pending int64
	Failing int64
}
