-- Chunked media upload and processing (docs/media-upload.md).

-- Premium and verified users get the larger media limits; an operator sets
-- them with `aviary admin user premium|verified`.
ALTER TABLE users
  ADD COLUMN premium  boolean NOT NULL DEFAULT false,
  ADD COLUMN verified boolean NOT NULL DEFAULT false;

-- One upload session and, once finalized and processed, the media it
-- became. state is the upload's life: uploading (segments arriving), then
-- the API's processing states. The blob keys are filled in by processing.
CREATE TABLE media (
  id                bigint PRIMARY KEY DEFAULT aviary_next_id(),
  media_key         text NOT NULL UNIQUE,
  owner_id          bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  app_id            bigint REFERENCES apps(id) ON DELETE SET NULL,
  media_type        text NOT NULL,
  media_category    text NOT NULL,
  kind              text NOT NULL CHECK (kind IN ('photo', 'video', 'animated_gif', 'subtitles')),
  total_bytes       bigint NOT NULL CHECK (total_bytes > 0),
  shared            boolean NOT NULL DEFAULT false,
  additional_owners bigint[] NOT NULL DEFAULT '{}',
  state             text NOT NULL DEFAULT 'uploading'
                    CHECK (state IN ('uploading', 'pending', 'in_progress', 'succeeded', 'failed')),
  progress_percent  int NOT NULL DEFAULT 0 CHECK (progress_percent BETWEEN 0 AND 100),
  error_code        int NOT NULL DEFAULT 0,
  error_name        text NOT NULL DEFAULT '',
  error_message     text NOT NULL DEFAULT '',
  width             int NOT NULL DEFAULT 0,
  height            int NOT NULL DEFAULT 0,
  duration_ms       bigint NOT NULL DEFAULT 0,
  aspect_ratio      text NOT NULL DEFAULT '',
  output_type       text NOT NULL DEFAULT '',
  output_key        text NOT NULL DEFAULT '',
  preview_key       text NOT NULL DEFAULT '',
  view_count        bigint NOT NULL DEFAULT 0,
  alt_text          text NOT NULL DEFAULT '',
  attempts          int NOT NULL DEFAULT 0,
  created_at        timestamptz NOT NULL DEFAULT now(),
  expires_at        timestamptz NOT NULL,
  finalized_at      timestamptz,
  processed_at      timestamptz,
  swept_at          timestamptz
);
CREATE INDEX media_owner ON media (owner_id, id DESC);
-- The sweeper's work: finalized media not yet processed, and uploads that
-- were never finalized (deleted once expired).
CREATE INDEX media_unsettled ON media (state, swept_at NULLS FIRST, id)
  WHERE state IN ('uploading', 'pending', 'in_progress');

-- Every stored copy of an appended segment. A retried segment adds a copy
-- (seq orders them; the newest of an index counts), so concurrent appends
-- on any API replica never overwrite each other's object; superseded
-- copies are deleted with the upload's segments after assembly.
CREATE TABLE media_segments (
  media_id      bigint NOT NULL REFERENCES media(id) ON DELETE CASCADE,
  segment_index int NOT NULL CHECK (segment_index BETWEEN 0 AND 999),
  seq           bigserial,
  blob_key      text NOT NULL,
  size          bigint NOT NULL CHECK (size > 0),
  created_at    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (media_id, segment_index, seq)
);

-- The media a post carries (attachments.media_keys), in order.
ALTER TABLE posts ADD COLUMN media_ids bigint[] NOT NULL DEFAULT '{}';
