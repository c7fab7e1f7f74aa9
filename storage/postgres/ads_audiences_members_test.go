package postgres

import (
	"bytes"
	"testing"
	"time"

	"github.com/aviary-dev/aviary/storage"
)

func TestBatchMembers(t *testing.T) {
	key := func(kind, b byte) storage.MemberKey {
		var k storage.MemberKey
		k[0], k[1] = kind, b
		return k
	}
	b := func(kind, v byte) []byte { k := key(kind, v); return k[:] }
	t1, t2, t3 := time.Unix(100, 0), time.Unix(200, 0), time.Unix(300, 0)
	op := func(at time.Time, keys ...storage.MemberKey) storage.AudienceOperation {
		return storage.AudienceOperation{Type: storage.AudienceUpdate, EffectiveAt: at, ExpiresAt: at.Add(time.Hour), Keys: keys}
	}
	tests := []struct {
		name string
		ops  []storage.AudienceOperation
		want []member
	}{
		{name: "none", ops: nil, want: nil},
		{
			name: "sorted by type byte then digest",
			ops:  []storage.AudienceOperation{op(t1, key(2, 9), key(1, 200), key(2, 1))},
			want: []member{{b(1, 200), t1, t1.Add(time.Hour)}, {b(2, 1), t1, t1.Add(time.Hour)}, {b(2, 9), t1, t1.Add(time.Hour)}},
		},
		{
			name: "a key given twice keeps its last times",
			ops:  []storage.AudienceOperation{op(t1, key(1, 5), key(1, 3)), op(t2, key(1, 4)), op(t3, key(1, 5))},
			want: []member{{b(1, 3), t1, t1.Add(time.Hour)}, {b(1, 4), t2, t2.Add(time.Hour)}, {b(1, 5), t3, t3.Add(time.Hour)}},
		},
		{
			name: "twice in one operation",
			ops:  []storage.AudienceOperation{op(t2, key(3, 1), key(3, 1))},
			want: []member{{b(3, 1), t2, t2.Add(time.Hour)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := batchMembers(tt.ops)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d members, want %d: %v", len(got), len(tt.want), got)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if !bytes.Equal(g.key, w.key) || !g.effective.Equal(w.effective) || !g.expiry.Equal(w.expiry) {
					t.Errorf("member %d = %x %v %v, want %x %v %v", i, g.key, g.effective, g.expiry, w.key, w.effective, w.expiry)
				}
			}
		})
	}
}
