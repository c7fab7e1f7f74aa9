package postgres_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
)

func ruleValues(rs []storage.StreamRule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Value
	}
	return out
}

func TestStreamRulesAddListDelete(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ctx := t.Context()
	app := factory.App(t, db, nil)
	other := factory.App(t, db, nil)
	v0, err := db.StreamRulesVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}

	add := func(appID int64, dry bool, values ...string) storage.StreamRulesAdded {
		t.Helper()
		rules := make([]storage.NewStreamRule, len(values))
		for i, v := range values {
			rules[i] = storage.NewStreamRule{Value: v, Tag: "tag " + v}
		}
		got, err := db.AddStreamRules(ctx, storage.StreamRuleAdd{AppID: appID, Rules: rules, Max: 4, DryRun: dry})
		if err != nil {
			t.Fatalf("add %v: %v", values, err)
		}
		return got
	}
	first := add(app.ID, false, "cat", "dog", "cat")
	if len(first.Created) != 2 || first.Created[0].Tag != "tag cat" || first.Created[0].AppID != app.ID || first.Created[0].ID == 0 ||
		len(first.Duplicates) != 1 || first.Duplicates[0].Index != 2 || first.Duplicates[0].Existing.ID != first.Created[0].ID {
		t.Fatalf("first add = %+v", first)
	}
	v1, _ := db.StreamRulesVersion(ctx)
	if v1 <= v0 {
		t.Errorf("version %d after an add, was %d", v1, v0)
	}
	// Another app may hold the same value.
	if got := add(other.ID, false, "cat"); len(got.Created) != 1 {
		t.Errorf("other app's add = %+v", got)
	}
	// A dry run reports and changes nothing.
	dry := add(app.ID, true, "bird", "dog")
	if len(dry.Created) != 1 || dry.Created[0].Value != "bird" || len(dry.Duplicates) != 1 {
		t.Errorf("dry run = %+v", dry)
	}
	if n, _ := db.CountStreamRules(ctx, app.ID); n != 2 {
		t.Errorf("count after a dry run = %d, want 2", n)
	}
	// Over the cap of 4: nothing is added.
	_, err = db.AddStreamRules(ctx, storage.StreamRuleAdd{AppID: app.ID, Max: 4,
		Rules: []storage.NewStreamRule{{Value: "a"}, {Value: "b"}, {Value: "c"}}})
	if !errors.Is(err, storage.ErrStreamRuleCap) {
		t.Errorf("add over the cap: %v", err)
	}
	if n, _ := db.CountStreamRules(ctx, app.ID); n != 2 {
		t.Errorf("count after a refused add = %d, want 2", n)
	}
	// Duplicates do not count against the cap.
	if got := add(app.ID, false, "cat", "a", "b"); len(got.Created) != 2 {
		t.Errorf("add up to the cap = %+v", got)
	}

	all, err := db.StreamRules(ctx, storage.StreamRuleFilter{AppID: app.ID})
	if err != nil || len(all) != 4 || all[0].Value != "cat" || all[1].Value != "dog" {
		t.Fatalf("list = %v, %v", ruleValues(all), err)
	}
	page, err := db.StreamRules(ctx, storage.StreamRuleFilter{AppID: app.ID, After: all[0].ID, Limit: 2})
	if err != nil || len(page) != 2 || page[0].ID != all[1].ID {
		t.Errorf("page = %v, %v", ruleValues(page), err)
	}
	byID, err := db.StreamRules(ctx, storage.StreamRuleFilter{AppID: other.ID, IDs: []int64{all[1].ID}})
	if err != nil || len(byID) != 0 {
		t.Errorf("another app's rule by id = %v, %v", byID, err)
	}

	// Delete by id and value; unknown ones are left out; dry runs change nothing.
	d := storage.StreamRuleDelete{AppID: app.ID, IDs: []int64{all[0].ID, 42}, Values: []string{"dog", "nope"}, DryRun: true}
	if got, err := db.DeleteStreamRules(ctx, d); err != nil || len(got) != 2 {
		t.Errorf("dry delete = %v, %v", ruleValues(got), err)
	}
	v2, _ := db.StreamRulesVersion(ctx)
	d.DryRun = false
	got, err := db.DeleteStreamRules(ctx, d)
	if err != nil || len(got) != 2 || got[0].Value != "cat" || got[1].Value != "dog" {
		t.Errorf("delete = %v, %v", ruleValues(got), err)
	}
	if v3, _ := db.StreamRulesVersion(ctx); v3 <= v2 {
		t.Errorf("version %d after a delete, was %d", v3, v2)
	}
	everything, version, err := db.AllStreamRules(ctx)
	if err != nil || len(everything) != 3 || version == 0 {
		t.Errorf("all = %v, %d, %v", ruleValues(everything), version, err)
	}
	of, err := db.StreamRulesOf(ctx, []int64{other.ID})
	if err != nil || len(of) != 1 || of[0].AppID != other.ID {
		t.Errorf("rules of the other app = %v, %v", of, err)
	}
	gone, err := db.DeleteStreamRules(ctx, storage.StreamRuleDelete{AppID: app.ID, All: true})
	if err != nil || len(gone) != 2 {
		t.Errorf("delete all = %v, %v", ruleValues(gone), err)
	}
	if n, _ := db.CountStreamRules(ctx, other.ID); n != 1 {
		t.Errorf("the other app's rules after delete all = %d", n)
	}
}

// Concurrent adds never take an app over its cap.
func TestStreamRulesCapUnderConcurrency(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	app := factory.App(t, db, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := db.AddStreamRules(t.Context(), storage.StreamRuleAdd{AppID: app.ID, Max: 5,
				Rules: []storage.NewStreamRule{{Value: string(rune('a' + i))}, {Value: string(rune('A' + i))}}})
			if err != nil && !errors.Is(err, storage.ErrStreamRuleCap) {
				t.Errorf("add: %v", err)
			}
		}()
	}
	wg.Wait()
	if n, _ := db.CountStreamRules(t.Context(), app.ID); n != 4 {
		t.Errorf("count = %d, want 4 (two adds of two under a cap of 5)", n)
	}
}
