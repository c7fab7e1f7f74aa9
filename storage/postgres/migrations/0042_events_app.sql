-- GET /_aviary/events lists the events an app's requests appended
-- (docs/aviary-endpoints.md): by app, in log order.
CREATE INDEX events_app ON events (app_id, seq) WHERE app_id <> 0;
