-- The console's media page (docs/console.md) lists the uploads of a
-- user's apps, newest first.
CREATE INDEX media_app ON media (app_id, id DESC) WHERE app_id IS NOT NULL;
