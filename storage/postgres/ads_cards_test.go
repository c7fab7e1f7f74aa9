package postgres_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestAdsCards: ids and card_uri by kind, lookups by kind and by
// card_uri, another account's card not found, an update through apply
// (an error of apply changes nothing), and the two deletes: a component
// card is marked, any other kind's row goes.
func TestAdsCards(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct, other := factory.AdAccount(t, db, nil), factory.AdAccount(t, db, nil)
	create := func(kind string) storage.Card {
		c, err := db.CreateCard(ctx, storage.NewCard{AccountID: acct.ID, Kind: kind, CardType: "T", Name: kind, Body: json.RawMessage(`{"a":1}`)})
		if err != nil {
			t.Fatalf("create %s: %v", kind, err)
		}
		if c.CardURI != storage.CardURI(c.ID) || c.Kind != kind || c.Deleted() {
			t.Fatalf("created %+v", c)
		}
		return c
	}
	comp, poll := create(storage.CardComponent), create(storage.CardPoll)
	if id, ok := storage.CardIDOfURI(comp.CardURI); !ok || id != comp.ID {
		t.Fatalf("CardIDOfURI(%s) = %s, %v", comp.CardURI, id, ok)
	}
	if got, err := db.CardByURI(ctx, acct.ID, poll.CardURI); err != nil || got.ID != poll.ID {
		t.Fatalf("CardByURI: %+v, %v", got, err)
	}
	for _, miss := range []struct{ acct, kind, id string }{
		{other.ID, storage.CardPoll, poll.ID}, {acct.ID, storage.CardComponent, poll.ID}, {acct.ID, storage.CardPoll, "nope"},
	} {
		if _, err := db.Card(ctx, miss.acct, miss.kind, miss.id, true); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Card %+v: %v, want ErrNotFound", miss, err)
		}
	}
	if _, err := db.CardByURI(ctx, other.ID, poll.CardURI); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("CardByURI of another account: %v", err)
	}
	refused := errors.New("refused")
	if _, err := db.UpdateCard(ctx, acct.ID, storage.CardComponent, comp.ID, func(c *storage.Card) error {
		c.Name = "changed"
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("update with a failing apply: %v", err)
	}
	up, err := db.UpdateCard(ctx, acct.ID, storage.CardComponent, comp.ID, func(c *storage.Card) error {
		c.Name, c.CardType, c.Body = "renamed", "U", json.RawMessage(`{"b":2}`)
		return nil
	})
	if err != nil || up.Name != "renamed" || up.CardType != "U" || string(up.Body) != `{"b": 2}` {
		t.Fatalf("update: %+v %s, %v", up, up.Body, err)
	}

	if d, err := db.DeleteCard(ctx, acct.ID, storage.CardComponent, comp.ID); err != nil || !d.Deleted() {
		t.Fatalf("delete component: %+v, %v", d, err)
	}
	if _, err := db.Card(ctx, acct.ID, storage.CardComponent, comp.ID, false); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("deleted component card found without withDeleted: %v", err)
	}
	if c, err := db.Card(ctx, acct.ID, storage.CardComponent, comp.ID, true); err != nil || !c.Deleted() {
		t.Errorf("deleted component card with withDeleted: %+v, %v", c, err)
	}
	if _, err := db.CardByURI(ctx, acct.ID, comp.CardURI); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("CardByURI of a deleted card: %v", err)
	}
	if _, err := db.DeleteCard(ctx, acct.ID, storage.CardComponent, comp.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, err := db.DeleteCard(ctx, acct.ID, storage.CardPoll, poll.ID); err != nil {
		t.Fatalf("delete poll: %v", err)
	}
	if _, err := db.Card(ctx, acct.ID, storage.CardPoll, poll.ID, true); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("hard-deleted poll found: %v", err)
	}
	page, err := db.ListCards(ctx, storage.CardFilter{AccountID: acct.ID, Kind: storage.CardComponent},
		storage.ListOptions{Count: 10, Sort: storage.Sort{Field: "created_at"}, WithDeleted: true, WithTotal: true})
	if err != nil || len(page.Items) != 1 || *page.Total != 1 {
		t.Fatalf("list with deleted: %+v, %v", page, err)
	}
}
