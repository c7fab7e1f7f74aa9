-- The X Activity API (docs/activity.md): an app's subscriptions to
-- activity events, and their deliveries through the webhook pipeline.
--
-- A subscription names one event type (domain/activity, canonical name)
-- and one filter: a user id (most types) or a keyword (news.new), with an
-- optional direction for the types that take one. Its events go to the
-- app's activity stream (GET /2/activity/stream) and, when webhook_id is
-- set, to that webhook too.
CREATE TABLE activity_subscriptions (
  id             bigint PRIMARY KEY DEFAULT aviary_next_id(),
  app_id         bigint NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  event_type     text NOT NULL,
  -- Exactly one filter: user_id or keyword.
  filter_user_id bigint,
  filter_keyword text,
  direction      text CHECK (direction IN ('inbound', 'outbound')),
  tag            text NOT NULL DEFAULT '',
  -- Deleting a webhook deletes the subscriptions that deliver to it.
  webhook_id     bigint REFERENCES webhooks(id) ON DELETE CASCADE,
  -- The user whose token made the subscription (0: app-only). A private
  -- type's subscription is made by the filtered user's own token.
  created_by     bigint NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  CHECK ((filter_user_id IS NULL) <> (filter_keyword IS NULL))
);
-- One subscription per app, type, filter and destination (a repeat is a
-- DuplicateSubscription refusal, not a second copy of every event).
CREATE UNIQUE INDEX activity_subscriptions_unique ON activity_subscriptions
  (app_id, event_type, coalesce(filter_user_id, 0), coalesce(filter_keyword, ''),
   coalesce(direction, ''), coalesce(webhook_id, 0));
-- Matching: the sink looks up the subscriptions of an event's users and
-- of a type's keywords.
CREATE INDEX activity_subscriptions_user ON activity_subscriptions (filter_user_id, event_type)
  WHERE filter_user_id IS NOT NULL;
CREATE INDEX activity_subscriptions_keyword ON activity_subscriptions (event_type)
  WHERE filter_keyword IS NOT NULL;
CREATE INDEX activity_subscriptions_app ON activity_subscriptions (app_id, id);

-- Activity events reach webhooks as deliveries of kind 'activity': one
-- per (webhook, event, subscription), since one event may match several
-- subscriptions delivering to one webhook (a post that is both the
-- author's post.create and another user's post.mention.create).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_kind_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_kind_check
  CHECK (kind IN ('post', 'replay_status', 'activity'));
ALTER TABLE webhook_deliveries ADD COLUMN subscription_id bigint;
CREATE UNIQUE INDEX webhook_deliveries_live_activity ON webhook_deliveries (webhook_id, event_seq, subscription_id)
  WHERE replay_job_id IS NULL AND redelivery_of IS NULL AND kind = 'activity';
CREATE INDEX webhook_deliveries_window_activity ON webhook_deliveries (webhook_id, event_at)
  WHERE replay_job_id IS NULL AND redelivery_of IS NULL AND kind = 'activity';
