-- Ads API core (issue 9): account access and features, funding
-- instruments, campaigns, line items, promoted tweets, targeting criteria,
-- account history, the category catalogues and creatives. Every entity has
-- an opaque base-36 text id, created_at/updated_at and a soft-delete flag;
-- lists page by (sort attribute, id), see docs/ads-conventions.md.

CREATE FUNCTION aviary_base36(n bigint) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  digits constant text := '0123456789abcdefghijklmnopqrstuvwxyz';
  out text := '';
BEGIN
  IF n = 0 THEN RETURN '0'; END IF;
  WHILE n > 0 LOOP
    out := substr(digits, (n % 36)::int + 1, 1) || out;
    n := n / 36;
  END LOOP;
  RETURN out;
END $$;

-- aviary_ads_id is a new opaque ads entity id (base 36 of a core id).
CREATE FUNCTION aviary_ads_id() RETURNS text LANGUAGE sql AS $$ SELECT aviary_base36(aviary_next_id()) $$;

ALTER TABLE ad_accounts
  ADD COLUMN business_id        text NOT NULL DEFAULT '',
  ADD COLUMN business_name      text NOT NULL DEFAULT '',
  ADD COLUMN timezone_switch_at timestamptz;
CREATE INDEX ad_accounts_name ON ad_accounts (lower(name) text_pattern_ops);

-- Who may use an account: its owner and the users granted access with
-- `aviary admin ads grant`. The account in an ads path must be here for the
-- authenticated user.
CREATE TABLE ad_account_users (
  account_id text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  user_id    bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, user_id)
);
CREATE INDEX ad_account_users_user ON ad_account_users(user_id);
INSERT INTO ad_account_users (account_id, user_id) SELECT id, user_id FROM ad_accounts;

CREATE TABLE ad_account_features (
  account_id text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  feature    text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, feature)
);

CREATE TABLE account_apps (
  id                          text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id                  text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  app_store_identifier        text NOT NULL,
  conversion_tracking_enabled boolean NOT NULL DEFAULT false,
  deep_link_pattern           text,
  os_type                     text NOT NULL,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  deleted                     boolean NOT NULL DEFAULT false
);
CREATE INDEX account_apps_account ON account_apps(account_id);

CREATE TABLE funding_instruments (
  id                           text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id                   text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  name                         text NOT NULL,
  description                  text NOT NULL DEFAULT '',
  type                         text NOT NULL,
  currency                     text NOT NULL DEFAULT 'USD',
  entity_status                text NOT NULL DEFAULT 'ACTIVE',
  start_time                   timestamptz NOT NULL DEFAULT now(),
  end_time                     timestamptz,
  credit_limit_local_micro     bigint,
  funded_amount_local_micro    bigint,
  credit_remaining_local_micro bigint,
  io_header                    text,
  cancelled                    boolean NOT NULL DEFAULT false,
  created_at                   timestamptz NOT NULL DEFAULT now(),
  updated_at                   timestamptz NOT NULL DEFAULT now(),
  deleted                      boolean NOT NULL DEFAULT false
);
CREATE INDEX funding_instruments_account ON funding_instruments(account_id, created_at, id);

CREATE TABLE campaigns (
  id                              text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id                      text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  funding_instrument_id           text NOT NULL REFERENCES funding_instruments(id),
  name                            text NOT NULL,
  entity_status                   text NOT NULL DEFAULT 'ACTIVE',
  budget_optimization             text NOT NULL DEFAULT 'LINE_ITEM',
  daily_budget_amount_local_micro bigint,
  total_budget_amount_local_micro bigint,
  standard_delivery               boolean,
  purchase_order_number           text,
  duration_in_days                integer,
  frequency_cap                   integer,
  currency                        text NOT NULL DEFAULT 'USD',
  created_at                      timestamptz NOT NULL DEFAULT now(),
  updated_at                      timestamptz NOT NULL DEFAULT now(),
  deleted                         boolean NOT NULL DEFAULT false
);
CREATE INDEX campaigns_account ON campaigns(account_id, created_at, id);

CREATE TABLE line_items (
  id                              text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id                      text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  campaign_id                     text NOT NULL REFERENCES campaigns(id),
  name                            text,
  currency                        text NOT NULL DEFAULT 'USD',
  objective                       text NOT NULL,
  product_type                    text NOT NULL,
  placements                      text[] NOT NULL DEFAULT '{}',
  goal                            text,
  bid_strategy                    text NOT NULL,
  bid_amount_local_micro          bigint,
  pay_by                          text,
  start_time                      timestamptz,
  end_time                        timestamptz,
  entity_status                   text NOT NULL DEFAULT 'ACTIVE',
  total_budget_amount_local_micro bigint,
  daily_budget_amount_local_micro bigint,
  frequency_cap                   integer,
  duration_in_days                integer,
  advertiser_user_id              text,
  advertiser_domain               text,
  categories                      text[] NOT NULL DEFAULT '{}',
  android_app_store_identifier    text,
  ios_app_store_identifier        text,
  audience_expansion              text,
  target_cpa_local_micro          bigint,
  primary_web_event_tag           text,
  standard_delivery               boolean,
  automatic_tweet_promotion       boolean,
  creative_source                 text NOT NULL DEFAULT 'MANUAL',
  created_at                      timestamptz NOT NULL DEFAULT now(),
  updated_at                      timestamptz NOT NULL DEFAULT now(),
  deleted                         boolean NOT NULL DEFAULT false
);
CREATE INDEX line_items_account ON line_items(account_id, created_at, id);
CREATE INDEX line_items_campaign ON line_items(campaign_id);

CREATE TABLE promoted_tweets (
  id              text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id      text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  line_item_id    text NOT NULL REFERENCES line_items(id),
  tweet_id        bigint NOT NULL,
  entity_status   text NOT NULL DEFAULT 'ACTIVE',
  approval_status text NOT NULL DEFAULT 'ACCEPTED',
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted         boolean NOT NULL DEFAULT false
);
CREATE INDEX promoted_tweets_account ON promoted_tweets(account_id, created_at, id);
CREATE INDEX promoted_tweets_line_item ON promoted_tweets(line_item_id);

CREATE TABLE targeting_criteria (
  id              text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id      text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  line_item_id    text NOT NULL REFERENCES line_items(id),
  targeting_type  text NOT NULL,
  targeting_value text NOT NULL,
  operator_type   text NOT NULL DEFAULT 'EQ',
  name            text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  deleted         boolean NOT NULL DEFAULT false
);
CREATE INDEX targeting_criteria_account ON targeting_criteria(account_id, created_at, id);
CREATE INDEX targeting_criteria_line_item ON targeting_criteria(line_item_id);

-- One row per create/update/delete of a campaign, line item, promoted
-- tweet or targeting criterion, written in the transaction of the change.
CREATE TABLE account_history (
  id                bigint PRIMARY KEY DEFAULT aviary_next_id(),
  account_id        text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  entity_type       text NOT NULL,
  entity_id         text NOT NULL,
  change_type       text NOT NULL,
  change_by_user_id bigint,
  change_platform   text NOT NULL DEFAULT 'API',
  changes           jsonb NOT NULL DEFAULT '{}',
  entity_data       jsonb NOT NULL DEFAULT '{}',
  change_time       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX account_history_entity ON account_history(account_id, entity_type, entity_id, change_time, id);

CREATE TABLE advertiser_business_categories (
  id             text PRIMARY KEY,
  name           text NOT NULL,
  iab_categories text[] NOT NULL DEFAULT '{}'
);

CREATE TABLE curated_categories (
  id                                   text PRIMARY KEY,
  name                                 text NOT NULL,
  description                          text NOT NULL DEFAULT '',
  country_codes                        text[] NOT NULL DEFAULT '{}',
  publisher_user_ids                   text[] NOT NULL DEFAULT '{}',
  videos_monetized_in_last_thirty_days integer NOT NULL DEFAULT 0,
  created_at                           timestamptz NOT NULL DEFAULT now(),
  updated_at                           timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE line_item_curated_categories (
  id                  text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id          text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  line_item_id        text NOT NULL REFERENCES line_items(id),
  curated_category_id text NOT NULL REFERENCES curated_categories(id),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  deleted             boolean NOT NULL DEFAULT false
);
CREATE INDEX line_item_curated_categories_account ON line_item_curated_categories(account_id, created_at, id);

CREATE TABLE account_media (
  id            text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id    text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  media_key     text,
  creative_type text NOT NULL,
  video_id      text,
  media_url     text,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now(),
  deleted       boolean NOT NULL DEFAULT false
);
CREATE INDEX account_media_account ON account_media(account_id, created_at, id);

CREATE TABLE media_creatives (
  id               text PRIMARY KEY DEFAULT aviary_ads_id(),
  account_id       text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  line_item_id     text NOT NULL REFERENCES line_items(id),
  account_media_id text NOT NULL REFERENCES account_media(id),
  landing_url      text,
  approval_status  text NOT NULL DEFAULT 'ACCEPTED',
  entity_status    text NOT NULL DEFAULT 'ACTIVE',
  serving_status   text NOT NULL DEFAULT 'ACTIVE',
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  deleted          boolean NOT NULL DEFAULT false
);
CREATE INDEX media_creatives_account ON media_creatives(account_id, created_at, id);

CREATE TABLE media_library (
  account_id       text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  media_key        text NOT NULL,
  name             text,
  file_name        text,
  title            text,
  description      text,
  poster_media_key text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  deleted          boolean NOT NULL DEFAULT false,
  PRIMARY KEY (account_id, media_key)
);
CREATE INDEX media_library_account ON media_library(account_id, created_at, media_key);
