package postgres

import (
	"bytes"
	"slices"
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
			want: []member{{b(1, 200), t1, t1.Add(time.Hour), 0}, {b(2, 1), t1, t1.Add(time.Hour), 0}, {b(2, 9), t1, t1.Add(time.Hour), 0}},
		},
		{
			name: "a key given twice keeps its last times",
			ops:  []storage.AudienceOperation{op(t1, key(1, 5), key(1, 3)), op(t2, key(1, 4)), op(t3, key(1, 5))},
			want: []member{{b(1, 3), t1, t1.Add(time.Hour), 0}, {b(1, 4), t2, t2.Add(time.Hour), 1}, {b(1, 5), t3, t3.Add(time.Hour), 2}},
		},
		{
			name: "twice in one operation",
			ops:  []storage.AudienceOperation{op(t2, key(3, 1), key(3, 1))},
			want: []member{{b(3, 1), t2, t2.Add(time.Hour), 0}},
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
				if !bytes.Equal(g.key, w.key) || !g.effective.Equal(w.effective) || !g.expiry.Equal(w.expiry) || g.op != w.op {
					t.Errorf("member %d = %x %v %v op %d, want %x %v %v op %d", i, g.key, g.effective, g.expiry, g.op, w.key, w.effective, w.expiry, w.op)
				}
			}
		})
	}
}

// TestDecodeOperationsVersions: a batch recorded before user objects of
// several keys were kept (version 1) reads as one user object per key;
// version 2 keeps them.
func TestDecodeOperationsVersions(t *testing.T) {
	at := time.UnixMicro(1_800_000_000_000_000).UTC()
	var k1, k2, k3 storage.MemberKey
	k1[0], k2[0], k3[0] = 1, 2, 3
	op := storage.AudienceOperation{Type: storage.AudienceUpdate, EffectiveAt: at, ExpiresAt: at.Add(time.Hour), Users: 2,
		Keys: []storage.MemberKey{k1, k2, k3}, People: []storage.KeyRange{{Start: 1, End: 3}}}
	raw := encodeOperations([]storage.AudienceOperation{op})
	got, err := decodeOperations(raw)
	if err != nil || len(got) != 1 || len(got[0].People) != 1 || got[0].People[0] != op.People[0] || len(got[0].Keys) != 3 {
		t.Fatalf("version 2: %+v, %v", got, err)
	}
	v1 := append([]byte{1}, raw[1:len(raw)-3]...) // version 1 has no people
	got, err = decodeOperations(v1)
	if err != nil || len(got) != 1 || got[0].People != nil || len(got[0].Keys) != 3 || got[0].Users != 2 {
		t.Fatalf("version 1: %+v, %v", got, err)
	}
	bad := append(slices.Clone(raw[:len(raw)-2]), 2, 2) // a person past the keys
	if _, err := decodeOperations(bad); err == nil {
		t.Errorf("a person past the operation's keys decoded")
	}
}
