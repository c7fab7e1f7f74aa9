-- A redelivery keeps naming the delivery it repeats after the retention
-- deleted that one. With 0028's ON DELETE SET NULL the copy lost its mark
-- and counted as the event's live delivery: two copies of one event then
-- broke the live unique index, failing every retention sweep until the
-- copies aged out too. redelivery_of is now a plain id (the log shows it;
-- the delivery it names may be gone).
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_redelivery_of_fkey;
