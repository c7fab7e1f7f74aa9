package postgres_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

// TestConsoleAdAccounts: a user lists the accounts they own or were
// granted, of both sides; another's is not found; all lists every one.
func TestConsoleAdAccounts(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	prod := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &alice})
	sandbox := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &alice, Sandbox: true})
	granted := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &bob})
	private := factory.AdAccount(t, db, &factory.AdAccountOpts{Owner: &bob})
	if err := db.GrantAdAccount(ctx, granted.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	ids := func(all bool) []string {
		list, err := db.ConsoleAdAccounts(ctx, alice.ID, all)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range list {
			out = append(out, a.ID+"@"+a.OwnerUsername)
		}
		return out
	}
	// Production first, then by creation.
	if got, want := ids(false), []string{prod.ID + "@" + alice.Username, granted.ID + "@" + bob.Username, sandbox.ID + "@" + alice.Username}; !slices.Equal(got, want) {
		t.Errorf("alice's accounts %v, want %v", got, want)
	}
	if got := ids(true); len(got) != 4 || !slices.Contains(got, private.ID+"@"+bob.Username) {
		t.Errorf("every account: %v", got)
	}
	for _, tc := range []struct {
		name string
		id   string
		all  bool
		ok   bool
	}{
		{"own", prod.ID, false, true},
		{"granted", granted.ID, false, true},
		{"another's", private.ID, false, false},
		{"another's, all", private.ID, true, true},
		{"unknown", "nope", true, false},
	} {
		a, err := db.ConsoleAdAccount(ctx, alice.ID, tc.all, tc.id)
		if tc.ok && (err != nil || a.ID != tc.id) {
			t.Errorf("%s: %+v, %v", tc.name, a, err)
		}
		if !tc.ok && !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", tc.name, err)
		}
	}
}

// TestConsoleAudienceBatches: the batch history newest first, with what an
// applied batch did to the members and why a failed one failed; a sharing
// account sees only the batches it recorded.
func TestConsoleAudienceBatches(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	acct := factory.AdAccount(t, db, nil)
	aud, err := db.CreateCustomAudience(ctx, storage.NewCustomAudience{AccountID: acct.ID, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	record := func(key string, keys ...storage.MemberKey) storage.AudienceBatch {
		b, err := db.RecordAudienceBatch(ctx, storage.NewAudienceBatch{AccountID: acct.ID, AudienceID: aud.ID, IdempotencyKey: key,
			Operations: []storage.AudienceOperation{{Type: storage.AudienceUpdate, Users: len(keys), Keys: keys,
				EffectiveAt: now, ExpiresAt: now.AddDate(1, 0, 0)}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	applied := record("1", factory.MemberKey(storage.IdentEmail, "a"), factory.MemberKey(storage.IdentEmail, "b"))
	if _, err := db.ApplyAudienceBatch(ctx, applied.ID, acceptAll); err != nil {
		t.Fatal(err)
	}
	failed := record("2", factory.MemberKey(storage.IdentEmail, "c"))
	if _, err := db.ApplyAudienceBatch(ctx, failed.ID, func([]storage.AudienceOperation) error { return errors.New("refused") }); err != nil {
		t.Fatal(err)
	}
	pending := record("3", factory.MemberKey(storage.IdentEmail, "d"))

	list, err := db.ConsoleAudienceBatches(ctx, aud.ID, "", 10)
	if err != nil || len(list) != 3 {
		t.Fatalf("batches: %+v, %v", list, err)
	}
	cases := []struct {
		name            string
		got             storage.ConsoleAudienceBatch
		id              string
		state           storage.BatchState
		added, received int64
		failure         string
		settled         bool
	}{
		{"pending", list[0], pending.ID, storage.BatchPending, -1, 1, "", false},
		{"failed", list[1], failed.ID, storage.BatchFailed, -1, 1, "refused", true},
		{"applied", list[2], applied.ID, storage.BatchApplied, 2, 2, "", true},
	}
	for _, c := range cases {
		b := c.got
		added := int64(-1)
		if b.MembersAdded != nil {
			added = *b.MembersAdded
		}
		failure := ""
		if b.Failure != nil {
			failure = *b.Failure
		}
		if b.ID != c.id || b.State != c.state || added != c.added || failure != c.failure || (b.SettledAt != nil) != c.settled ||
			len(b.Counts) != 1 || int64(b.Counts[0].TotalCount) != c.received {
			t.Errorf("%s: %+v (added %d, failure %q)", c.name, b, added, failure)
		}
	}
	if b := list[2]; b.MembersRemoved == nil || *b.MembersRemoved != 0 || b.MembersMerged == nil || *b.MembersMerged != 0 {
		t.Errorf("applied batch removed/merged: %v %v", b.MembersRemoved, b.MembersMerged)
	}
	if mine, err := db.ConsoleAudienceBatches(ctx, aud.ID, "another", 10); err != nil || len(mine) != 0 {
		t.Errorf("batches another account recorded: %+v, %v", mine, err)
	}
	if mine, err := db.ConsoleAudienceBatches(ctx, aud.ID, acct.ID, 1); err != nil || len(mine) != 1 || mine[0].ID != pending.ID {
		t.Errorf("the newest batch the account recorded: %+v, %v", mine, err)
	}
}

// TestConsoleCatalogs: a user's catalogs of both sides with their product
// counts; another's is not found; every product, variants too, with the
// image check's errors.
func TestConsoleCatalogs(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	alice, bob := factory.User(t, db, nil), factory.User(t, db, nil)
	cat, err := db.CreateProductCatalog(ctx, alice.ID, false, "shop")
	if err != nil {
		t.Fatal(err)
	}
	sandbox, err := db.CreateProductCatalog(ctx, alice.ID, true, "test shop")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := db.CreateProductCatalog(ctx, bob.ID, false, "theirs")
	if err != nil {
		t.Fatal(err)
	}
	g := "tee"
	if _, err := db.UpsertProducts(ctx, alice.ID, false, cat.ID, []storage.ProductUpsert{
		catalogProduct("solo", nil, ""), catalogProduct("tee-s", &g, "S"), catalogProduct("tee-m", &g, "M")}); err != nil {
		t.Fatal(err)
	}
	products, err := db.ConsoleCatalogProducts(ctx, cat.ID, 10)
	if err != nil || len(products) != 3 {
		t.Fatalf("products: %+v, %v", products, err)
	}
	broken := storage.ProductIssue{Field: "image_link", Rule: "unreachable", Message: "the image could not be fetched"}
	if err := db.RecordProductImages(ctx, cat.ID, "solo", products[0].Version, storage.ProductRejected, []storage.ProductIssue{broken}, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.RecordProductImages(ctx, cat.ID, "tee-s", products[1].Version, storage.ProductAccepted, nil, nil); err != nil {
		t.Fatal(err)
	}
	list, err := db.ConsoleProductCatalogs(ctx, alice.ID, false)
	if err != nil || len(list) != 2 || list[0].ID != cat.ID || list[1].ID != sandbox.ID || list[0].OwnerUsername != alice.Username {
		t.Fatalf("alice's catalogs: %+v, %v", list, err)
	}
	if c := list[0]; c.Products != 3 || c.WithErrors != 1 || c.Pending != 1 {
		t.Errorf("counts: %d products, %d with errors, %d pending", c.Products, c.WithErrors, c.Pending)
	}
	if all, err := db.ConsoleProductCatalogs(ctx, alice.ID, true); err != nil || len(all) != 3 {
		t.Errorf("every catalog: %+v, %v", all, err)
	}
	if _, err := db.ConsoleProductCatalog(ctx, alice.ID, false, theirs.ID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("alice loads bob's catalog: %v", err)
	}
	if c, err := db.ConsoleProductCatalog(ctx, alice.ID, true, theirs.ID); err != nil || c.Name != "theirs" {
		t.Errorf("all loads bob's catalog: %+v, %v", c, err)
	}
	products, err = db.ConsoleCatalogProducts(ctx, cat.ID, 10)
	if err != nil || len(products) != 3 {
		t.Fatal(products, err)
	}
	var got []string
	for _, p := range products {
		got = append(got, p.Fields.ID+":"+p.Status)
	}
	if want := []string{"solo:REJECTED", "tee-s:ACCEPTED", "tee-m:PENDING"}; !slices.Equal(got, want) {
		t.Errorf("products %v, want %v", got, want)
	}
	if errs := products[0].Errors; len(errs) != 1 || errs[0] != broken {
		t.Errorf("errors of solo: %+v", errs)
	}
	if two, err := db.ConsoleCatalogProducts(ctx, cat.ID, 2); err != nil || len(two) != 2 {
		t.Errorf("limit 2: %d, %v", len(two), err)
	}
}

// TestConsoleInsightQueries: the log of one account, newest first.
func TestConsoleInsightQueries(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, _ := storagetest.NewDB(t)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, acct := range []string{"a1", "b2", "a1", ""} {
		if err := db.RecordInsightQuery(ctx, storage.InsightQueryLog{AppID: 1, UserID: 2, AccountID: acct, Granularity: "HOUR",
			Keywords: []string{"kw" + string(rune('0'+i))}, Start: start, End: start.Add(time.Hour), Buckets: 1, TotalVolume: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := db.ConsoleInsightQueries(ctx, "a1", 10)
	if err != nil || len(list) != 2 || list[0].Keywords[0] != "kw2" || list[1].Keywords[0] != "kw0" || list[0].TotalVolume != 2 {
		t.Errorf("queries of a1: %+v, %v", list, err)
	}
	if list, err := db.ConsoleInsightQueries(ctx, "none", 10); err != nil || len(list) != 0 {
		t.Errorf("queries of an account without any: %+v, %v", list, err)
	}
}
