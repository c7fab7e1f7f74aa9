-- Audiences (issue 10): custom audiences and who may use them. Their
-- members, batches and the do-not-reach lists come in the migrations after
-- this one.

CREATE TABLE custom_audiences (
  id             text PRIMARY KEY DEFAULT aviary_ads_id(),
  -- owner_account_id owns the audience; other accounts use it through a
  -- custom_audience_permissions row.
  owner_account_id text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  name           text NOT NULL,
  description    text,
  audience_type  text NOT NULL DEFAULT 'CRM',
  partner_source text NOT NULL DEFAULT 'OTHER',
  -- audience_size is the number of members, kept exact by the batch
  -- workers in the transaction that changes the members.
  audience_size  bigint NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now(),
  deleted        boolean NOT NULL DEFAULT false
);
CREATE INDEX custom_audiences_owner ON custom_audiences(owner_account_id, created_at, id);

-- A grant of an audience to another account (the /5/ tailored audience
-- permissions). Revoking soft-deletes the row.
CREATE TABLE custom_audience_permissions (
  id                 text PRIMARY KEY DEFAULT aviary_ads_id(),
  custom_audience_id text NOT NULL REFERENCES custom_audiences(id) ON DELETE CASCADE,
  granted_account_id text NOT NULL REFERENCES ad_accounts(id) ON DELETE CASCADE,
  permission_level   text NOT NULL CHECK (permission_level IN ('READ_ONLY', 'READ_WRITE')),
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  deleted            boolean NOT NULL DEFAULT false
);
CREATE UNIQUE INDEX custom_audience_permissions_live ON custom_audience_permissions(custom_audience_id, granted_account_id) WHERE NOT deleted;
CREATE INDEX custom_audience_permissions_granted ON custom_audience_permissions(granted_account_id) WHERE NOT deleted;
