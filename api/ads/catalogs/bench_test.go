package catalogs_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/api/ads/adstest"
	"github.com/aviary-dev/aviary/domain/products"
)

// benchBatch is 25 distinct products, half of them variants of groups.
func benchBatch(round int) []map[string]any {
	items := make([]map[string]any, products.MaxBatch)
	for i := range items {
		id := fmt.Sprintf("r%d-p%d", round, i)
		items[i] = product(id, "description", "A comfortable canvas shoe with a rubber sole, in many colors.",
			"gtin", "4006381333931", "sale_price", "50.00 USD", "product_type", "Apparel > Shoes > Sneakers",
			"additional_image_link", "https://img.example/"+id+"-2.jpg,https://img.example/"+id+"-3.png")
		if i%2 == 1 {
			items[i]["title"], items[i]["size"], items[i]["item_group_id"] = fmt.Sprintf("Tee %d", i/4), fmt.Sprint(i), fmt.Sprintf("g%d-%d", round, i/4)
		}
	}
	return items
}

// BenchmarkProductBatch measures PUT products with 25 new products each,
// through the whole API (OAuth, validation, one transaction, 25 image
// checks enqueued): the p50 and p99 latency of a batch and products per
// second; and the validation of a batch alone.
func BenchmarkProductBatch(b *testing.B) {
	b.Run("api", func(b *testing.B) {
		s := adstest.New(b, adstest.Options{RateLimitScale: 1e6})
		alice := s.User(b, "alice")
		early(b, s, alice)
		id := newCatalog(b, alice)
		// Warm up (connections, the first statements) outside the timing.
		const warmup = 5
		for i := 0; i < warmup; i++ {
			alice.DoJSON(b, http.MethodPut, productsPath(id), batch(benchBatch(-1-i)...)).Status(b, http.StatusOK)
		}
		lat := make([]time.Duration, 0, b.N)
		start := time.Now()
		for i := 0; b.Loop(); i++ {
			body := batch(benchBatch(i)...)
			t0 := time.Now()
			r := alice.DoJSON(b, http.MethodPut, productsPath(id), body)
			lat = append(lat, time.Since(t0))
			if r.Code != http.StatusOK {
				b.Fatalf("batch %d: %d %s", i, r.Code, r.Raw)
			}
		}
		elapsed := time.Since(start)
		report(b, lat)
		b.ReportMetric(float64(len(lat)*products.MaxBatch)/elapsed.Seconds(), "products/s")
	})
	b.Run("validation", func(b *testing.B) {
		pv := products.NewValidator()
		raws := make([]json.RawMessage, 0, products.MaxBatch)
		for _, it := range benchBatch(0) {
			raw, _ := json.Marshal(it)
			raws = append(raws, raw)
		}
		lat := make([]time.Duration, 0, b.N)
		for b.Loop() {
			t0 := time.Now()
			for _, res := range pv.Batch(raws) {
				if !res.Valid() {
					b.Fatalf("invalid bench product: %v", res.Errors)
				}
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat)
	})
}

// report adds the p50 and p99 of the batch latencies in milliseconds.
func report(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	at := func(q float64) float64 {
		return float64(lat[min(len(lat)-1, int(q*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), "p50-ms")
	b.ReportMetric(at(0.99), "p99-ms")
}
