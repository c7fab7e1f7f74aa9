-- Ads posts (issue 30): POST /12/accounts/:id/tweet makes a post like
-- POST /2/tweets does (same insert, same post.create event), and records
-- what the advertising API adds in ads_posts. card_uri is a column of the
-- post itself, because the core API shows it (tweet.fields=card_uri).
ALTER TABLE posts ADD COLUMN card_uri text;

CREATE TABLE ads_posts (
  post_id               bigint PRIMARY KEY REFERENCES posts(id) ON DELETE CASCADE,
  account_id            text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  name                  text,
  nullcast              boolean NOT NULL,
  conversation_settings text NOT NULL DEFAULT 'EVERYONE'
    CHECK (conversation_settings IN ('EVERYONE', 'FOLLOWING', 'MENTIONED_USERS')),
  video_cta             text CHECK (video_cta IN ('VISIT_SITE', 'WATCH_NOW')),
  video_cta_value       text,
  video_title           text,
  video_description     text,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ads_posts_account ON ads_posts (account_id, post_id DESC);
