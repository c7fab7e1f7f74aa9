-- Tables of the deliberately wrong tree.
CREATE TABLE campaigns (
  id         text PRIMARY KEY,
  name       text NOT NULL, -- a comment, with a comma
  budget     numeric(12, 2),
  created_at timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT campaigns_name CHECK (name <> ''),
  UNIQUE (name)
);
CREATE TABLE IF NOT EXISTS media (
  media_key text PRIMARY KEY
);
ALTER TABLE campaigns
  ADD COLUMN updated_at timestamptz,
  ADD COLUMN IF NOT EXISTS deleted boolean;
ALTER TABLE media RENAME COLUMN media_key TO key;
