package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// Cards of the advertising API (table ads_cards, migration 0036). A
// component card's id is a decimal core id, as the platform shows them;
// the other kinds have short base-36 ads ids. card_uri is card://<id>.

const cardColumns = `id, account_id, kind, card_type, card_uri, name, body, created_at, updated_at, deleted_at`

func scanCard(row pgx.Row, tail ...any) (storage.Card, error) {
	var c storage.Card
	err := row.Scan(append([]any{&c.ID, &c.AccountID, &c.Kind, &c.CardType, &c.CardURI, &c.Name, &c.Body,
		&c.CreatedAt, &c.UpdatedAt, &c.DeletedAt}, tail...)...)
	return c, err
}

// CreateCard stores a new card and returns it with its id and card_uri.
func (db *DB) CreateCard(ctx context.Context, n storage.NewCard) (storage.Card, error) {
	c, err := scanCard(db.pool.QueryRow(ctx, `WITH new AS (
			SELECT CASE WHEN $2 = '`+storage.CardComponent+`' THEN aviary_next_id()::text ELSE aviary_ads_id() END AS id)
		INSERT INTO ads_cards (id, account_id, kind, card_type, card_uri, name, body)
		SELECT new.id, $1, $2, $3, '`+storage.CardURIPrefix+`' || new.id, $4, $5 FROM new
		RETURNING `+cardColumns, n.AccountID, n.Kind, n.CardType, n.Name, n.Body))
	return c, wrap(fmt.Sprintf("create %s card of account %s", n.Kind, n.AccountID), err)
}

// Card loads the account's card id of kind; a deleted (marked) card only
// withDeleted; else storage.ErrNotFound.
func (db *DB) Card(ctx context.Context, accountID, kind, id string, withDeleted bool) (storage.Card, error) {
	c, err := scanCard(db.pool.QueryRow(ctx, `SELECT `+cardColumns+` FROM ads_cards
		WHERE account_id = $1 AND kind = $2 AND id = $3 AND (deleted_at IS NULL OR $4)`, accountID, kind, id, withDeleted))
	return c, wrap(fmt.Sprintf("load %s card %s", kind, id), err)
}

// CardByURI loads the account's card, of any kind, that card_uri names,
// if it is not deleted; else storage.ErrNotFound.
func (db *DB) CardByURI(ctx context.Context, accountID, uri string) (storage.Card, error) {
	c, err := scanCard(db.pool.QueryRow(ctx, `SELECT `+cardColumns+` FROM ads_cards
		WHERE account_id = $1 AND card_uri = $2 AND deleted_at IS NULL`, accountID, uri))
	return c, wrap("load card "+uri, err)
}

// ListCards pages the account's cards of one kind.
func (db *DB) ListCards(ctx context.Context, f storage.CardFilter, opts storage.ListOptions) (storage.Page[storage.Card], error) {
	spec := listSpec{Listing: storage.ListingCards, From: "ads_cards", Columns: cardColumns, ID: "id", Deleted: "(deleted_at IS NOT NULL)"}
	spec.Filter.add("account_id = $?", f.AccountID)
	spec.Filter.add("kind = $?", f.Kind)
	spec.Filter.in("card_type", f.CardTypes)
	spec.Filter.in("id", f.IDs)
	spec.Filter.in("card_uri", f.URIs)
	if f.NamePrefix != "" {
		spec.Filter.add(`lower(name) LIKE $? ESCAPE '\'`, likePrefix(f.NamePrefix))
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanCard)
	if err != nil {
		return page, fmt.Errorf("list %s cards of account %s: %w", f.Kind, f.AccountID, err)
	}
	return page, nil
}

// UpdateCard changes the account's card id of kind (not deleted, else
// storage.ErrNotFound) through apply, which sees the card as stored (row
// locked) and may change its name, card_type and body; an error of apply
// leaves the card as it was and is returned as is.
func (db *DB) UpdateCard(ctx context.Context, accountID, kind, id string, apply func(*storage.Card) error) (storage.Card, error) {
	var c storage.Card
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		cur, err := scanCard(tx.QueryRow(ctx, `SELECT `+cardColumns+` FROM ads_cards
			WHERE account_id = $1 AND kind = $2 AND id = $3 AND deleted_at IS NULL FOR UPDATE`, accountID, kind, id))
		if err != nil {
			return wrap(fmt.Sprintf("load %s card %s", kind, id), err)
		}
		if err := apply(&cur); err != nil {
			return err
		}
		c, err = scanCard(tx.QueryRow(ctx, `UPDATE ads_cards SET name = $2, card_type = $3, body = $4, updated_at = now()
			WHERE id = $1 RETURNING `+cardColumns, id, cur.Name, cur.CardType, cur.Body))
		return wrap(fmt.Sprintf("update %s card %s", kind, id), err)
	})
	return c, err
}

// DeleteCard deletes the account's card id of kind and returns it as it
// was: a component card is marked deleted (DeletedAt set), any other
// kind's row goes. A missing or already deleted card is
// storage.ErrNotFound.
func (db *DB) DeleteCard(ctx context.Context, accountID, kind, id string) (storage.Card, error) {
	sql := `DELETE FROM ads_cards WHERE account_id = $1 AND kind = $2 AND id = $3 RETURNING ` + cardColumns
	if kind == storage.CardComponent {
		sql = `UPDATE ads_cards SET deleted_at = now(), updated_at = now()
			WHERE account_id = $1 AND kind = $2 AND id = $3 AND deleted_at IS NULL RETURNING ` + cardColumns
	}
	c, err := scanCard(db.pool.QueryRow(ctx, sql, accountID, kind, id))
	return c, wrap(fmt.Sprintf("delete %s card %s", kind, id), err)
}
