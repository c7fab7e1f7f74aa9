-- Product catalogs (issue 11). One catalog per user and side holds all
-- of its products; deleting a catalog deletes them (permanent). sandbox
-- is the listener side the catalog was created on: a production catalog is
-- invisible on the sandbox listener and the other way round.

CREATE TABLE product_catalogs (
  id         text PRIMARY KEY DEFAULT aviary_ads_id(),
  user_id    bigint NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name       text NOT NULL,
  sandbox    boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX product_catalogs_user ON product_catalogs(user_id, sandbox);

-- A product: the merchant's id in its catalog, a service key that stays
-- with it across updates, the fields as submitted, and the outcome of
-- validation and of the image checks the workers run. version grows with
-- every update, so an image check of an older version is discarded.
CREATE TABLE products (
  catalog_id       text NOT NULL REFERENCES product_catalogs(id) ON DELETE CASCADE,
  id               text NOT NULL,
  product_key      text NOT NULL UNIQUE DEFAULT aviary_next_id()::text,
  item_group_id    text,
  item_group_key   text,
  fields           jsonb NOT NULL,
  status           text NOT NULL,
  errors           jsonb NOT NULL DEFAULT '[]',
  warnings         jsonb NOT NULL DEFAULT '[]',
  version          bigint NOT NULL DEFAULT 1,
  -- images_checked_version is the version whose images were checked last
  -- (0: none yet); a product is awaiting its check while it is below
  -- version and the product has images.
  images_checked_version bigint NOT NULL DEFAULT 0,
  -- images_swept_at is when the image-check sweep last looked at the
  -- product (NULL: never since its current version was written); the
  -- sweep takes the least recently swept first, so every pending product
  -- is reached however many there are.
  images_swept_at  timestamptz,
  -- seq orders products by first submission (the first variant of a
  -- group is the one listed).
  seq              bigint NOT NULL DEFAULT aviary_next_id(),
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (catalog_id, id)
);
CREATE INDEX products_catalog_seq ON products(catalog_id, seq);
CREATE INDEX products_group ON products(catalog_id, item_group_key, seq) WHERE item_group_key IS NOT NULL;
-- An upsert finds the key of each item_group_id it names.
CREATE INDEX products_group_id ON products(catalog_id, item_group_id, seq) WHERE item_group_id IS NOT NULL;
CREATE INDEX products_awaiting_images ON products(images_swept_at NULLS FIRST, updated_at) WHERE images_checked_version < version;
