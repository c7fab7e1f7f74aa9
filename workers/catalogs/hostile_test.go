package catalogs

import (
	"bufio"
	"github.com/aviary-dev/aviary/internal/outbound"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
	"github.com/aviary-dev/aviary/storage/storagetest/factory"
	"github.com/aviary-dev/aviary/tasks"
	"github.com/aviary-dev/aviary/workers/sweep"
)

// storedCatalog gives a new user of db a catalog holding products ids
// (pending, each with an image under base) and returns the catalog.
func storedCatalog(t *testing.T, db *postgres.DB, base string, ids ...string) storage.ProductCatalog {
	t.Helper()
	user := factory.User(t, db, nil)
	cat, err := db.CreateProductCatalog(t.Context(), user.ID, false, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var items []storage.ProductUpsert
	for _, id := range ids {
		items = append(items, storage.ProductUpsert{Fields: storage.ProductFields{ID: id, Title: "t", Description: "d",
			Availability: "in stock", Condition: "new", Price: "1.00 USD", Link: "https://s.example/" + id,
			ImageLink: base + "/" + id + ".png"}})
	}
	if _, err := db.UpsertProducts(t.Context(), user.ID, false, cat.ID, items); err != nil {
		t.Fatal(err)
	}
	return cat
}

// TestHostileStatusLine: an image server whose status line carries a NUL
// or invalid UTF-8 in its reason phrase is an unreachable image like any
// other: the product ends REJECTED, the task succeeds (PostgreSQL would
// refuse the raw phrase in jsonb and the check would fail forever).
func TestHostileStatusLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, line string }{
		{"nul", "HTTP/1.1 404 Not\x00Found"},
		{"invalid utf-8", "HTTP/1.1 503 Gone \xff\xfe\x1b[31m"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, allow := allowServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Errorf("hijack: %v", err)
					return
				}
				defer conn.Close()
				writeRaw(buf, tt.line+"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			}))
			db, _ := storagetest.NewDB(t)
			cat := storedCatalog(t, db, srv.URL, "hostile")
			prod, err := db.ProductForImageCheck(t.Context(), cat.ID, "hostile")
			if err != nil {
				t.Fatal(err)
			}
			p := &Processor{Store: db, Checker: &Checker{Fetcher: outbound.New(outbound.Config{Allow: allow, Timeout: 2 * time.Second})}}
			task, err := tasks.NewCatalogImages(prod.Key, tasks.CatalogImages{CatalogID: cat.ID, ProductID: "hostile", Version: prod.Version})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.ProcessTask(t.Context(), task); err != nil {
				t.Fatalf("process: %v, want the outcome recorded", err)
			}
			got, err := db.ProductForImageCheck(t.Context(), cat.ID, "hostile")
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != storage.ProductRejected || len(got.Errors) != 1 || got.Errors[0].Rule != RuleUnreachable ||
				got.Errors[0].Field != "image_link" {
				t.Fatalf("product %s, errors %+v; want REJECTED with one image_link:%s", got.Status, got.Errors, RuleUnreachable)
			}
			msg := got.Errors[0].Message
			if strings.ContainsAny(msg, "\x00\x1b\ufffd") || strings.Contains(msg, "Not") || strings.Contains(msg, "Gone") {
				t.Fatalf("message %q quotes the remote reason phrase", msg)
			}
			if code := strings.Fields(tt.line)[1]; !strings.Contains(msg, code) {
				t.Fatalf("message %q does not name status %s", msg, code)
			}
		})
	}
}

func writeRaw(buf *bufio.ReadWriter, s string) {
	_, _ = buf.WriteString(s)
	_ = buf.Flush()
}

// TestSanitizedIssues: whatever reaches the store as an issue (here a
// NUL, an escape and invalid UTF-8 in every field) is stored stripped of
// them rather than failing the statement.
func TestSanitizedIssues(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	cat := storedCatalog(t, db, "https://img.example", "p")
	prod, err := db.ProductForImageCheck(t.Context(), cat.ID, "p")
	if err != nil {
		t.Fatal(err)
	}
	dirty := storage.ProductIssue{Field: "image\x00_link", Rule: "unreach\xffable", Message: "bad\x00 \x1b[31mserver\u0085 \xc3"}
	if err := db.RecordProductImages(t.Context(), cat.ID, "p", prod.Version, storage.ProductRejected,
		[]storage.ProductIssue{dirty}, []storage.ProductIssue{dirty}); err != nil {
		t.Fatalf("record: %v", err)
	}
	got, err := db.ProductForImageCheck(t.Context(), cat.ID, "p")
	if err != nil {
		t.Fatal(err)
	}
	want := storage.ProductIssue{Field: "image_link", Rule: "unreachable", Message: "bad [31mserver "}
	if len(got.Errors) != 1 || got.Errors[0] != want || len(got.Warnings) != 1 || got.Warnings[0] != want {
		t.Fatalf("stored errors %+v, warnings %+v; want %+v", got.Errors, got.Warnings, want)
	}
}

// TestSweepReachesEveryPending: with more pending products than a tick's
// batch, successive ticks reach every one of them (each tick takes the
// least recently swept first), not the oldest page again and again.
func TestSweepReachesEveryPending(t *testing.T) {
	t.Parallel()
	db, _ := storagetest.NewDB(t)
	ids := []string{"p1", "p2", "p3", "p4", "p5"}
	storedCatalog(t, db, "https://img.example", ids...)
	now := time.Now().Add(time.Hour)
	queue := &fakeQueue{}
	sw := &sweep.Sweeper[storage.Product]{Source: &Sweep{Store: db}, Queue: queue, BatchSize: 2,
		Clock: func() time.Time { now = now.Add(time.Second); return now }}
	seen := map[string]int{}
	for tick := 1; tick <= 3; tick++ {
		before := len(queue.enqueued)
		if err := sw.Tick(t.Context()); err != nil {
			t.Fatalf("tick %d: %v", tick, err)
		}
		if n := len(queue.enqueued) - before; n != 2 {
			t.Fatalf("tick %d enqueued %d checks, want 2", tick, n)
		}
	}
	for _, task := range queue.enqueued {
		p, err := tasks.ParseCatalogImages(task)
		if err != nil {
			t.Fatal(err)
		}
		seen[p.ProductID]++
	}
	for _, id := range ids {
		if seen[id] == 0 {
			t.Errorf("three ticks of 2 never reached %s (reached %v)", id, seen)
		}
	}
}
