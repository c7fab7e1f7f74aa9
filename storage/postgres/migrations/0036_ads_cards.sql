-- Cards of the advertising API (issue 30): component cards (card_type from
-- their components), poll cards, video and image conversation cards. One
-- table for every kind so that a card_uri (card://<id>) names exactly one
-- card whatever its kind: ads posts (POST /12/accounts/:id/tweet) check
-- their card_uri here. The fields of each kind live in body (the columns a
-- list filters or sorts by are columns). Poll, video and image
-- conversation cards are deleted for good (the row goes); component cards
-- are deleted by a mark (with_deleted lists them).
CREATE TABLE ads_cards (
  id          text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  kind        text NOT NULL CHECK (kind IN ('component', 'poll', 'video_conversation', 'image_conversation')),
  card_type   text NOT NULL,
  card_uri    text NOT NULL UNIQUE,
  name        text NOT NULL,
  body        jsonb NOT NULL DEFAULT '{}',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  deleted_at  timestamptz
);
CREATE INDEX ads_cards_account ON ads_cards (account_id, kind, created_at DESC, id DESC);
CREATE INDEX ads_cards_name ON ads_cards (account_id, lower(name) text_pattern_ops);
