package usage

import (
	"testing"
	"time"

	"github.com/aviary-dev/aviary/render"
	"github.com/aviary-dev/aviary/storage"
)

func TestCountBody(t *testing.T) {
	t.Parallel()
	type page struct {
		Data     []render.Tweet   `json:"data,omitempty"`
		Includes *render.Includes `json:"includes,omitempty"`
		Meta     struct{}         `json:"meta"`
	}
	type one struct {
		Data     *render.User    `json:"data"`
		Includes render.Includes `json:"includes"`
	}
	type created struct {
		Data struct{ ID string } `json:"data"`
	}
	tweets := func(n int) []render.Tweet { return make([]render.Tweet, n) }
	users := func(n int) []render.User { return make([]render.User, n) }
	tests := []struct {
		name string
		body any
		kind Resource
		want Counts
	}{
		{"search page with includes", page{Data: tweets(2), Includes: &render.Includes{Tweets: tweets(1), Users: users(1)}}, Posts, Counts{Posts: 3, Users: 1}},
		{"pointer to a page", &page{Data: tweets(4)}, Posts, Counts{Posts: 4}},
		{"empty page", page{}, Posts, Counts{}},
		{"users page counts users", page{Data: tweets(0), Includes: &render.Includes{Tweets: tweets(2)}}, Users, Counts{Posts: 2}},
		{"one user with its pinned post", one{Data: &render.User{}, Includes: render.Includes{Tweets: tweets(1)}}, Users, Counts{Posts: 1, Users: 1}},
		{"one missing user", one{}, Users, Counts{}},
		{"map body", map[string]any{"data": []any{1, 2}, "includes": map[string]any{"tweets": []any{1}}}, Posts, Counts{Posts: 3}},
		{"data of another resource is not counted", page{Data: tweets(3)}, None, Counts{}},
		{"created object", created{}, PostCreate, Counts{}},
		{"nil", nil, Posts, Counts{}},
		{"not an object", []int{1, 2}, Posts, Counts{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := countBody(tt.body, tt.kind); got != tt.want {
				t.Fatalf("countBody = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestPeriodStart(t *testing.T) {
	t.Parallel()
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	tests := []struct {
		now      string
		resetDay int
		want     string
	}{
		{"2026-11-28 03:00:00", 1, "2026-11-01 00:00:00"},
		{"2026-11-01 00:00:00", 1, "2026-11-01 00:00:00"},
		{"2026-11-14 23:59:59", 15, "2026-10-15 00:00:00"},
		{"2026-11-15 00:00:00", 15, "2026-11-15 00:00:00"},
		{"2026-01-03 10:00:00", 5, "2025-12-05 00:00:00"},
	}
	for _, tt := range tests {
		if got := PeriodStart(day(tt.now), tt.resetDay); !got.Equal(day(tt.want)) {
			t.Errorf("PeriodStart(%s, %d) = %s, want %s", tt.now, tt.resetDay, got, tt.want)
		}
	}
}

func TestPrices(t *testing.T) {
	t.Parallel()
	tests := []struct {
		p      Prices
		c      storage.UsageCounts
		on     bool
		cost   int64
		priced map[Resource]bool
	}{
		{Prices{}, storage.UsageCounts{PostsRead: 5}, false, 0, map[Resource]bool{Posts: false, Users: false, PostCreate: false}},
		{Prices{PostRead: 2}, storage.UsageCounts{PostsRead: 5, UsersRead: 3}, true, 10, map[Resource]bool{Posts: true, Users: true, PostCreate: false}},
		{Prices{PostWrite: 7, UserRead: 1}, storage.UsageCounts{PostsWritten: 2, UsersRead: 3}, true, 17, map[Resource]bool{Posts: true, Users: true, PostCreate: true}},
	}
	for _, tt := range tests {
		m := New(Config{Prices: tt.p}, Deps{})
		if tt.p.On() != tt.on || tt.p.cost(tt.c) != tt.cost {
			t.Errorf("%+v: on %v cost %d, want %v %d", tt.p, tt.p.On(), tt.p.cost(tt.c), tt.on, tt.cost)
		}
		for res, want := range tt.priced {
			if m.priced(res) != want {
				t.Errorf("%+v: priced(%d) = %v, want %v", tt.p, res, !want, want)
			}
		}
	}
}

func TestDailyUsage(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	got := dailyUsage([]storage.UsageDay{{Day: from.AddDate(0, 0, 1), UsageCounts: storage.UsageCounts{PostsRead: 7}}}, from, 3)
	want := []dayUsage{{"2026-11-26T00:00:00.000Z", "0"}, {"2026-11-27T00:00:00.000Z", "7"}, {"2026-11-28T00:00:00.000Z", "0"}}
	if len(got) != len(want) {
		t.Fatalf("days %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("day %d = %v, want %v", i, got[i], want[i])
		}
	}
}
