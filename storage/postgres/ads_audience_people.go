package postgres

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// A custom audience member is one person (docs/ads-audiences.md): the keys
// of a user object, and of every user object since that shared a key with
// it. Each key is a row of custom_audience_members; person_key is NULL on
// the row of a one-key member (the most common case, written without
// touching the person index) and, on every row of a member with several
// keys, its anchor: one of its own keys (the lowest when it was formed).
// A member's rows always carry the same times (every write sets them all)
// and are deleted together, so a member is counted by its anchor row:
// person_key NULL or equal to member_key.

// applyOperations applies ops in order, each run of consecutive
// operations of one type at once, adding to res the members created,
// deleted and merged.
func applyOperations(ctx context.Context, tx pgx.Tx, res *storage.AudienceBatchResult, ops []storage.AudienceOperation) error {
	size := res.SizeNow
	for i := 0; i < len(ops); {
		j := i + 1
		for j < len(ops) && ops[j].Type == ops[i].Type {
			j++
		}
		if ops[i].Type == storage.AudienceDelete {
			n, err := deleteMembers(ctx, tx, res.Audience, ops[i:j])
			if err != nil {
				return err
			}
			res.Removed += n
		} else {
			empty := size+res.Added-res.Removed-res.Merged == 0
			added, merged, err := upsertMembers(ctx, tx, res.Audience, ops[i:j], empty)
			if err != nil {
				return err
			}
			res.Added, res.Merged = res.Added+added, res.Merged+merged
		}
		i = j
	}
	return nil
}

// member is one key to write: the key, its times and the index of the
// last operation of the run naming it.
type member struct {
	key               []byte
	effective, expiry time.Time
	op                int
}

// batchMembers returns the keys of a run of Update operations, each once
// (a key given twice keeps its last times), sorted by key: the members'
// primary key then takes them in index order, so each leaf page is
// visited once instead of once per random key (about a third of the
// COPY's time for a 60,000-key batch, docs/ads-audiences.md).
func batchMembers(ops []storage.AudienceOperation) []member {
	index := map[storage.MemberKey]int{}
	var out []member
	for i, op := range ops {
		for k := range op.Keys {
			if at, ok := index[op.Keys[k]]; ok {
				out[at].effective, out[at].expiry, out[at].op = op.EffectiveAt, op.ExpiresAt, i
				continue
			}
			index[op.Keys[k]] = len(out)
			out = append(out, member{key: op.Keys[k][:], effective: op.EffectiveAt, expiry: op.ExpiresAt, op: i})
		}
	}
	slices.SortFunc(out, func(a, b member) int { return bytes.Compare(a.key, b.key) })
	return out
}

// unionFind joins the positions of a run's sorted keys into people; a
// root is the lowest position (so the lowest key) of its set.
type unionFind []int32

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = int32(i)
	}
	return u
}

func (u unionFind) find(i int32) int32 {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u unionFind) union(a, b int32) {
	ra, rb := u.find(a), u.find(b)
	switch {
	case ra < rb:
		u[rb] = ra
	case rb < ra:
		u[ra] = rb
	}
}

// existingKey is a key of the run that is already a member's: its
// position and its member's anchor (multi: the member has several keys).
type existingKey struct {
	pos    int32
	anchor []byte
	multi  bool
}

// person is one member the run writes: its lowest key's position, the
// members it joins (their anchors), the position whose times it takes
// (the last operation naming any of its keys) and whether a key is new.
type person struct {
	first   int32
	anchors [][]byte
	multis  []bool
	times   int32
	keys    int
	fresh   bool
}

// upsertMembers applies a run of Update operations: every user object is
// one person, joined with every other user object of the run and every
// existing member sharing a key with it. A person joining no member is a
// new member; one joining members refreshes them (all their rows take its
// times) and adds its new keys to them; one joining several merges them
// into the one with the lowest anchor. It returns the members created and
// merged away; empty says the audience has no member.
func upsertMembers(ctx context.Context, tx pgx.Tx, audienceID string, ops []storage.AudienceOperation, empty bool) (added, merged int64, err error) {
	members := batchMembers(ops)
	var existing []existingKey
	hasPeople := slices.ContainsFunc(ops, func(op storage.AudienceOperation) bool { return len(op.People) > 0 })
	var pos map[storage.MemberKey]int32
	if hasPeople || !empty {
		pos = positions(members)
	}
	if !empty {
		if existing, err = existingMembers(ctx, tx, audienceID, members, pos); err != nil {
			return 0, 0, err
		}
	}
	if !hasPeople && len(existing) == 0 { // one new member per key
		return int64(len(members)), 0, copyMembers(ctx, tx, audienceID, members, nil)
	}
	uf := newUnionFind(len(members))
	for _, op := range ops {
		for _, r := range op.People {
			first := pos[op.Keys[r.Start]]
			for k := r.Start + 1; k < r.End; k++ {
				uf.union(first, pos[op.Keys[k]])
			}
		}
	}
	byAnchor := make(map[string]int32, len(existing))
	for _, e := range existing {
		if at, ok := byAnchor[string(e.anchor)]; ok {
			uf.union(at, e.pos)
		} else {
			byAnchor[string(e.anchor)] = e.pos
		}
	}
	old := make([]bool, len(members))
	for _, e := range existing {
		old[e.pos] = true
	}
	people, personOf := groupPeople(members, existing, old, uf)
	var w personWrites
	for i := range people {
		p := &people[i]
		if len(p.anchors) == 0 {
			added++
		} else {
			merged += int64(len(p.anchors) - 1)
		}
		w.plan(p, members)
	}
	if err := w.refresh(ctx, tx, audienceID); err != nil {
		return 0, 0, err
	}
	var fresh []member
	var personKeys [][]byte
	for i := range members {
		if !old[i] {
			p := &people[personOf[i]]
			m := members[i]
			m.effective, m.expiry = members[p.times].effective, members[p.times].expiry
			fresh = append(fresh, m)
			personKeys = append(personKeys, w.keyOf[personOf[i]])
		}
	}
	return added, merged, copyMembers(ctx, tx, audienceID, fresh, personKeys)
}

// positions maps each key to its position in members.
func positions(members []member) map[storage.MemberKey]int32 {
	pos := make(map[storage.MemberKey]int32, len(members))
	for i := range members {
		pos[storage.MemberKey(members[i].key)] = int32(i)
	}
	return pos
}

// groupPeople gathers the run's keys into people (personOf[i]: the person
// of position i; old[i]: position i is a member's key already).
func groupPeople(members []member, existing []existingKey, old []bool, uf unionFind) (people []person, personOf []int32) {
	index := make([]int32, len(members))
	for i := range index {
		index[i] = -1
	}
	personOf = make([]int32, len(members))
	for i := range members {
		r := uf.find(int32(i))
		if index[r] < 0 {
			index[r] = int32(len(people))
			people = append(people, person{first: int32(i), times: int32(i)})
		}
		p := &people[index[r]]
		personOf[i] = index[r]
		p.keys++
		if members[i].op > members[p.times].op {
			p.times = int32(i)
		}
	}
	seen := map[string]bool{}
	for _, e := range existing {
		if seen[string(e.anchor)] {
			continue
		}
		seen[string(e.anchor)] = true
		p := &people[personOf[e.pos]]
		p.anchors, p.multis = append(p.anchors, e.anchor), append(p.multis, e.multi)
	}
	for i := range members {
		if !old[i] {
			people[personOf[i]].fresh = true
		}
	}
	return people, personOf
}

// personWrites are the statements a run's people make: the person key of
// each person's new rows (keyOf, nil for a one-key member) and the
// existing members to re-point and refresh, by anchor, apart for members
// of one key (found by member_key) and of several (by person_key).
type personWrites struct {
	keyOf         [][]byte
	single, multi refreshes
}

// refreshes are existing members to update: old anchor, new person key
// (nil: still one key), times.
type refreshes struct {
	old, key          [][]byte
	effective, expiry []time.Time
}

func (r *refreshes) add(old, key []byte, m member) {
	r.old, r.key = append(r.old, old), append(r.key, key)
	r.effective, r.expiry = append(r.effective, m.effective), append(r.expiry, m.expiry)
}

// plan settles person p: its person key and the members it refreshes.
func (w *personWrites) plan(p *person, members []member) {
	times := members[p.times]
	if len(p.anchors) == 0 {
		var key []byte
		if p.keys > 1 {
			key = members[p.first].key
		}
		w.keyOf = append(w.keyOf, key)
		return
	}
	anchor, multi := p.anchors[0], p.fresh || len(p.anchors) > 1
	for i, a := range p.anchors {
		if bytes.Compare(a, anchor) < 0 {
			anchor = a
		}
		multi = multi || p.multis[i]
	}
	var key []byte
	if multi {
		key = anchor
	}
	w.keyOf = append(w.keyOf, key)
	for i, a := range p.anchors {
		if p.multis[i] {
			w.multi.add(a, key, times)
		} else {
			w.single.add(a, key, times)
		}
	}
}

// refresh re-points and refreshes the existing members the run joins.
func (w *personWrites) refresh(ctx context.Context, tx pgx.Tx, audienceID string) error {
	const set = `UPDATE custom_audience_members m SET person_key = u.p, effective_at = u.e, expires_at = u.x, updated_at = now()
		FROM unnest($2::bytea[], $3::bytea[], $4::timestamptz[], $5::timestamptz[]) AS u(o, p, e, x)
		WHERE m.audience_id = $1 AND (m.person_key, m.effective_at, m.expires_at) IS DISTINCT FROM (u.p, u.e, u.x) AND `
	for _, r := range []struct {
		rows  refreshes
		match string
	}{{w.single, `m.member_key = u.o AND m.person_key IS NULL`}, {w.multi, `m.person_key = u.o`}} {
		if len(r.rows.old) == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, set+r.match, audienceID, r.rows.old, r.rows.key, r.rows.effective, r.rows.expiry); err != nil {
			return wrap("refresh members of "+audienceID, err)
		}
	}
	return nil
}

// copyMembers COPYs new rows (sorted by key) with their person keys (nil:
// all NULL).
func copyMembers(ctx context.Context, tx pgx.Tx, audienceID string, rows []member, personKeys [][]byte) error {
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"custom_audience_members"},
		[]string{"audience_id", "member_key", "person_key", "effective_at", "expires_at"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) {
			var pk []byte
			if personKeys != nil {
				pk = personKeys[i]
			}
			return []any{audienceID, rows[i].key, pk, rows[i].effective, rows[i].expiry}, nil
		}))
	return wrap("copy members of "+audienceID, err)
}

// existingMembers returns which keys of the run are members' already, and
// those members' anchors.
func existingMembers(ctx context.Context, tx pgx.Tx, audienceID string, members []member, pos map[storage.MemberKey]int32) ([]existingKey, error) {
	keys := make([][]byte, len(members))
	for i := range members {
		keys[i] = members[i].key
	}
	rows, err := tx.Query(ctx, `SELECT member_key, person_key FROM custom_audience_members
		WHERE audience_id = $1 AND member_key = ANY($2::bytea[])`, audienceID, keys)
	if err != nil {
		return nil, wrap("find members of "+audienceID, err)
	}
	defer rows.Close()
	var out []existingKey
	for rows.Next() {
		var k, person []byte
		if err := rows.Scan(&k, &person); err != nil {
			return nil, wrap("scan member of "+audienceID, err)
		}
		e := existingKey{pos: pos[storage.MemberKey(k)], anchor: k}
		if person != nil {
			e.anchor, e.multi = person, true
		}
		out = append(out, e)
	}
	return out, wrap("find members of "+audienceID, rows.Err())
}

// deleteMembers removes the members that a run of Delete operations names
// any key of (all their keys) and returns how many members it removed.
func deleteMembers(ctx context.Context, tx pgx.Tx, audienceID string, ops []storage.AudienceOperation) (int64, error) {
	var keys [][]byte
	for _, op := range ops {
		for k := range op.Keys {
			keys = append(keys, op.Keys[k][:])
		}
	}
	slices.SortFunc(keys, bytes.Compare) // index order, as batchMembers
	n, err := removeMembers(ctx, tx, audienceID, `SELECT member_key, person_key FROM custom_audience_members
		WHERE audience_id = $1 AND member_key = ANY($2::bytea[])`, keys)
	return n, wrap("delete members of "+audienceID, err)
}

// removeMembers deletes whole the members of the rows chosen (a SELECT of
// member_key and person_key among the rows of audience $1, its further
// parameters args from $2): a one-key member's row, every row of a member
// of several keys. It returns how many members it deleted.
func removeMembers(ctx context.Context, tx pgx.Tx, audienceID, chosen string, args ...any) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `WITH chosen AS (`+chosen+`),
		singles AS (
			DELETE FROM custom_audience_members WHERE audience_id = $1
			AND member_key IN (SELECT member_key FROM chosen WHERE person_key IS NULL) RETURNING 1),
		people AS (
			DELETE FROM custom_audience_members WHERE audience_id = $1
			AND person_key IN (SELECT person_key FROM chosen WHERE person_key IS NOT NULL) RETURNING 1)
		SELECT (SELECT count(*) FROM singles) + (SELECT count(DISTINCT person_key) FROM chosen WHERE person_key IS NOT NULL)`,
		append([]any{audienceID}, args...)...).Scan(&n)
	return n, err
}
