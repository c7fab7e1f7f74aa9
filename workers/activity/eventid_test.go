package activity_test

import (
	"regexp"
	"testing"

	"github.com/aviary-dev/aviary/workers/activity"
)

// TestEventUUID: the id is the reference's decimal pattern, stable for one
// (seq, type, user, direction, subscription), and different when any of
// them differs (an author's post.create and a mention of the same post to
// one webhook no longer share an id).
func TestEventUUID(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(`^[0-9]{1,19}$`)
	type key struct {
		seq       int64
		typ       string
		user      int64
		direction string
		sub       int64
	}
	base := key{42, "post.create", 7, "", 3}
	tests := []struct {
		name string
		k    key
	}{
		{"another seq", key{43, "post.create", 7, "", 3}},
		{"another type", key{42, "post.mention.create", 7, "", 3}},
		{"another user", key{42, "post.create", 8, "", 3}},
		{"another direction", key{42, "post.create", 7, "inbound", 3}},
		{"another subscription", key{42, "post.create", 7, "", 4}},
		{"type and direction not confused", key{42, "post.createin", 7, "bound", 3}},
		{"large values", key{1<<62 + 5, "like.create", 1 << 60, "outbound", 1 << 40}},
	}
	uuid := func(k key) string { return activity.EventUUID(k.seq, k.typ, k.user, k.direction, k.sub) }
	want := uuid(base)
	if !pattern.MatchString(want) || uuid(base) != want {
		t.Fatalf("EventUUID(%+v) = %q, then %q: want a stable ^[0-9]{1,19}$", base, want, uuid(base))
	}
	seen := map[string]string{want: "base"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := uuid(tt.k)
			if !pattern.MatchString(got) {
				t.Errorf("EventUUID(%+v) = %q, not ^[0-9]{1,19}$", tt.k, got)
			}
			if other, dup := seen[got]; dup {
				t.Errorf("EventUUID(%+v) = %q, the same as %s", tt.k, got, other)
			}
			seen[got] = tt.name
		})
	}
}
