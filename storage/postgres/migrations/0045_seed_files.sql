-- The files of AVIARY_SEED_DIR already applied (docs/state.md): each is
-- applied once per deployment, by name; a reset keeps this record.
CREATE TABLE seed_files (
  name       text PRIMARY KEY,
  sha256     text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
