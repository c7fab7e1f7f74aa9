-- Line item lists sorted by name (issue 9): sort_by=name pages on
-- (coalesce(name, ''), id) within an account (names are optional; an
-- unnamed line item sorts as ""), so a page of 1000 out of 100,000 line
-- items is an index range scan, not a sort of the account's rows.
CREATE INDEX line_items_account_name ON line_items (account_id, (coalesce(name, '')), id);
