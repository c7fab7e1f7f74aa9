-- Custom audience members are people, not identifiers (issue 23,
-- docs/ads-audiences.md): a user object's identifiers are one member, and
-- a later user object sharing any of them is that member. Each identifier
-- stays a row of custom_audience_members; person_key ties the rows of a
-- member with several identifiers (its anchor: one of its own keys) and is
-- NULL on the row of a one-identifier member, so such rows (the bulk of a
-- CRM upload, and every row before this migration: one member each, as
-- they were counted) never enter the index below. audience_size counts
-- members; a member is counted by its anchor row (person_key NULL or equal
-- to member_key).
ALTER TABLE custom_audience_members ADD COLUMN person_key bytea;
CREATE INDEX custom_audience_members_person ON custom_audience_members (audience_id, person_key)
  WHERE person_key IS NOT NULL;
