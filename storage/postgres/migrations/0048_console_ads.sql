-- The console's ads pages (docs/console.md, "Ads"): what applying a custom
-- audience users batch did to the audience's members (NULL until the batch
-- is applied, and for batches applied before this migration), and the
-- keyword insights query log read per ads account.
ALTER TABLE custom_audience_batches
  ADD COLUMN members_added bigint,
  ADD COLUMN members_removed bigint,
  ADD COLUMN members_merged bigint;
CREATE INDEX insight_queries_account ON insight_queries (account_id, created_at DESC) WHERE account_id <> '';
