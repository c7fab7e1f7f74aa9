package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/domain/faults"
	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
)

func newFaultForm(app int64) url.Values {
	return url.Values{"app": {ids.Format(app)}, "method": {"get"}, "route": {"/2/users/me"}, "type": {"status"},
		"status": {"429"}, "count": {"2"}}
}

func TestConsoleFaults(t *testing.T) {
	f := setup(t)
	ctx := t.Context()
	alice := f.login(t, f.alice)

	p := alice.post("/console/faults", newFaultForm(f.aliceApp.ID))
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.location, "/console/faults?flash=") {
		t.Fatalf("create: %d %q\n%s", p.status, p.location, p.body)
	}
	all, err := f.faults.List(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("faults after create: %v %v", all, err)
	}
	got := all[0]
	if got.AppID != f.aliceApp.ID || got.Match.Method != "GET" || got.Match.Route != "/2/users/me" ||
		got.Effect.Kind != faults.Status || got.Effect.Status != 429 || got.Count != 2 || got.Remaining != 2 || got.Probability != 1 {
		t.Errorf("stored fault %+v", got)
	}
	if ok, err := f.faults.Hit(ctx, got); err != nil || !ok {
		t.Fatalf("hit: %v %v", ok, err)
	}
	p = alice.get("/console/faults")
	for _, want := range []string{`id="fault-` + got.ID + `"`, "alice-app", "status 429", "1 of 2", `<td class="hits">1</td>`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("faults page lacks %q:\n%s", want, p.body)
		}
	}

	// Invalid input is refused with the model's reason, and nothing is stored.
	bad := newFaultForm(f.aliceApp.ID)
	bad.Set("status", "200")
	if p := alice.post("/console/faults", bad); p.status != http.StatusBadRequest || !strings.Contains(p.body, "400 and 599") {
		t.Errorf("status 200: %d\n%s", p.status, p.body)
	}
	// Alice may not name bob's app, nor leave the app empty (every app).
	if p := alice.post("/console/faults", newFaultForm(f.bobApp.ID)); p.status != http.StatusBadRequest {
		t.Errorf("fault for bob's app: %d", p.status)
	}
	every := newFaultForm(0)
	every.Set("app", "")
	if p := alice.post("/console/faults", every); p.status != http.StatusBadRequest {
		t.Errorf("fault for every app by a user: %d", p.status)
	}

	// Bob neither sees nor deletes nor clears alice's fault.
	bob := f.login(t, f.bob)
	if p := bob.get("/console/faults"); strings.Contains(p.body, got.ID) {
		t.Errorf("bob sees alice's fault:\n%s", p.body)
	}
	if p := bob.post("/console/faults/"+got.ID+"/delete", nil); p.status != http.StatusNotFound {
		t.Errorf("bob deletes alice's fault: %d", p.status)
	}
	if p := bob.post("/console/faults", newFaultForm(f.bobApp.ID)); p.status != http.StatusSeeOther {
		t.Fatalf("bob's own fault: %d\n%s", p.status, p.body)
	}
	if p := bob.post("/console/faults/clear", nil); p.status != http.StatusSeeOther {
		t.Fatalf("bob clears: %d", p.status)
	}
	if all, _ := f.faults.List(ctx); len(all) != 1 || all[0].ID != got.ID {
		t.Errorf("after bob's clear, want alice's fault only: %+v", all)
	}

	// The administrator sees it, adds one for every app, and clears all.
	admin := f.login(t, f.admin)
	if p := admin.get("/console/faults"); !strings.Contains(p.body, got.ID) || !strings.Contains(p.body, `<option value="">every app</option>`) {
		t.Errorf("admin's faults page:\n%s", p.body)
	}
	every.Del("csrf_token") // alice's, set by her post
	if p := admin.post("/console/faults", every); p.status != http.StatusSeeOther {
		t.Errorf("admin's fault for every app: %d\n%s", p.status, p.body)
	}
	if p := alice.post("/console/faults/"+got.ID+"/delete", nil); p.status != http.StatusSeeOther {
		t.Errorf("alice deletes her fault: %d", p.status)
	}
	if all, _ := f.faults.List(ctx); len(all) != 1 || all[0].AppID != 0 {
		t.Errorf("after alice's delete, want the admin's fault only: %+v", all)
	}
	if p := admin.post("/console/faults/clear", nil); p.status != http.StatusSeeOther {
		t.Errorf("admin clears: %d", p.status)
	}
	if all, _ := f.faults.List(ctx); len(all) != 0 {
		t.Errorf("after the admin's clear: %+v", all)
	}
}

func TestConsoleFaultsAndStateCSRF(t *testing.T) {
	f := setup(t)
	admin := f.login(t, f.admin)
	for _, path := range []string{"/console/faults", "/console/faults/clear", "/console/faults/x/delete", "/console/state/reset"} {
		form := newFaultForm(f.aliceApp.ID)
		form.Set("confirm", "reset")
		form.Set("csrf_token", "forged")
		if p := admin.post(path, form); p.status != http.StatusForbidden {
			t.Errorf("POST %s with a forged token: %d", path, p.status)
		}
	}
	if all, _ := f.faults.List(t.Context()); len(all) != 0 || f.resets.Load() != 0 {
		t.Errorf("a forged form changed something: faults %+v, resets %d", all, f.resets.Load())
	}
}

func TestConsoleStateReset(t *testing.T) {
	f := setup(t)
	alice := f.login(t, f.alice)
	if p := alice.get("/console/state"); p.status != http.StatusNotFound {
		t.Errorf("a user's state page: %d", p.status)
	}
	if p := alice.post("/console/state/reset", url.Values{"confirm": {"reset"}}); p.status != http.StatusNotFound {
		t.Errorf("a user's reset: %d", p.status)
	}
	if p := alice.get("/console/apps"); strings.Contains(p.body, `href="/console/state"`) {
		t.Error("a user's nav links the state page")
	}

	admin := f.login(t, f.admin)
	// The first button only asks for confirmation.
	p := admin.post("/console/state/reset", nil)
	if p.status != http.StatusSeeOther || p.location != "/console/state?confirm=1" || f.resets.Load() != 0 {
		t.Fatalf("unconfirmed reset: %d %q, resets %d", p.status, p.location, f.resets.Load())
	}
	if p := admin.get(p.location); !strings.Contains(p.body, `id="confirm-reset"`) || !strings.Contains(p.body, `name="confirm" value="reset"`) {
		t.Errorf("confirm page:\n%s", p.body)
	}
	p = admin.post("/console/state/reset", url.Values{"confirm": {"reset"}})
	if p.status != http.StatusSeeOther || f.resets.Load() != 1 {
		t.Fatalf("confirmed reset: %d, resets %d", p.status, f.resets.Load())
	}
	if p := admin.get(p.location); !strings.Contains(p.body, "State reset (core, ads, events): 7 records removed; cleared faults.") {
		t.Errorf("after the reset:\n%s", p.body)
	}
}

func TestConsoleUsage(t *testing.T) {
	f := setup(t)
	ctx := t.Context()
	today := time.Now().UTC().Truncate(24 * time.Hour)
	err := f.db.AddUsage(ctx, []storage.UsageDay{
		{AppID: f.aliceApp.ID, Day: today, UsageCounts: storage.UsageCounts{PostsRead: 40, PostsWritten: 3, CreditsSpent: 25}},
		{AppID: f.aliceApp.ID, Day: today.AddDate(0, 0, -2), UsageCounts: storage.UsageCounts{PostsRead: 10, PostsWritten: 1, CreditsSpent: 5}},
		{AppID: f.aliceApp.ID, Day: today.AddDate(0, 0, -40), UsageCounts: storage.UsageCounts{PostsRead: 1000, CreditsSpent: 100}},
		{AppID: f.bobApp.ID, Day: today, UsageCounts: storage.UsageCounts{PostsRead: 777}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.AddAppCredits(ctx, f.aliceApp.ID, 500); err != nil {
		t.Fatal(err)
	}
	alice := f.login(t, f.alice)
	p := alice.get("/console/usage")
	row := `<tr id="usage-` + ids.Format(f.aliceApp.ID) + `"><td><a href="/console/apps/` + ids.Format(f.aliceApp.ID) + `/usage">alice-app</a></td><td>50</td><td>4</td><td>0</td><td>500</td><td>130</td><td class="balance">370</td></tr>`
	if !strings.Contains(p.body, row) {
		t.Errorf("usage overview lacks alice's row %s:\n%s", row, p.body)
	}
	// bob's row, by name or id (not by its 777: an id or token in the page may hold those digits).
	if strings.Contains(p.body, "bob-app") || strings.Contains(p.body, `id="usage-`+ids.Format(f.bobApp.ID)+`"`) {
		t.Errorf("alice sees bob's usage:\n%s", p.body)
	}
	p = alice.get(appPath(f.aliceApp) + "/usage")
	for _, want := range []string{`<dd id="posts-read">50</dd>`, `<dd id="posts-written">4</dd>`, `<dd id="credits-balance">370 (500 added, 130 spent)</dd>`,
		`<td>` + today.Format("2006-01-02") + `</td><td>40</td><td>3</td>`, `<td>` + today.AddDate(0, 0, -1).Format("2006-01-02") + `</td><td>0</td><td>0</td>`,
		`height="160" fill="#1a4f8b"><title>` + today.Format("2006-01-02") + `: 40 read</title>`, `busiest day 40`} {
		if !strings.Contains(p.body, want) {
			t.Errorf("alice's usage page lacks %s:\n%s", want, p.body)
		}
	}
	if n := strings.Count(p.body, "<tr><td>20"); n != 30 {
		t.Errorf("the table has %d days, want 30", n)
	}
	if p := alice.get(appPath(f.bobApp) + "/usage"); p.status != http.StatusNotFound {
		t.Errorf("alice reads bob's usage: %d", p.status)
	}
	admin := f.login(t, f.admin)
	if p := admin.get(appPath(f.bobApp) + "/usage"); p.status != http.StatusOK || !strings.Contains(p.body, `<dd id="posts-read">777</dd>`) {
		t.Errorf("admin reads bob's usage: %d", p.status)
	}
}
