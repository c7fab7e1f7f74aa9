package postgres

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// audienceFrom is the custom audiences one account ($1) sees: its own,
// and those granted to it by a live permission (p, never joined for the
// owner).
const audienceFrom = `custom_audiences a LEFT JOIN custom_audience_permissions p ON p.custom_audience_id = a.id
	AND p.granted_account_id = $1 AND a.owner_account_id <> $1 AND NOT p.deleted`

// audienceVisible is the condition of audienceFrom's rows the account sees.
const audienceVisible = `(a.owner_account_id = $1 OR p.id IS NOT NULL)`

// audienceColumns are read by scanAudience. The size leaves out members
// already expired that the expiry sweep has not removed yet, so an expired
// member never counts (audience_size itself counts every member); the
// expired members (their anchor rows: ads_audience_people.go) are counted
// only once members_expire_at says some may have expired.
const audienceColumns = `a.id, a.owner_account_id, a.name, a.description, a.audience_type, a.partner_source,
	a.audience_size - CASE WHEN a.members_expire_at <= now() THEN
		(SELECT count(*) FROM custom_audience_members m WHERE m.audience_id = a.id AND m.expires_at <= now()
			AND (m.person_key IS NULL OR m.person_key = m.member_key)) ELSE 0 END,
	COALESCE(p.permission_level, 'READ_WRITE'),
	(SELECT count(*) FROM custom_audience_batches b WHERE b.custom_audience_id = a.id AND b.state = 'PENDING'),
	a.created_at, a.updated_at, a.deleted, p.id IS NULL`

func scanAudience(row pgx.Row, tail ...any) (storage.CustomAudienceView, error) {
	var v storage.CustomAudienceView
	a := &v.CustomAudience
	err := row.Scan(append([]any{&a.ID, &a.OwnerAccountID, &a.Name, &a.Description, &a.AudienceType, &a.PartnerSource,
		&a.AudienceSize, &a.PermissionLevel, &a.InFlight, &a.CreatedAt, &a.UpdatedAt, &a.Deleted, &v.IsOwner}, tail...)...)
	return v, err
}

// ListCustomAudiences returns one page of the audiences the account sees
// (its own and those shared with it) matching f.
func (db *DB) ListCustomAudiences(ctx context.Context, f storage.CustomAudienceFilter, opts storage.ListOptions) (storage.Page[storage.CustomAudienceView], error) {
	spec := listSpec{Listing: storage.ListingCustomAudiences, From: audienceFrom, Columns: audienceColumns, ID: "a.id", Deleted: "a.deleted"}
	// The account is the first argument: audienceFrom's $1.
	spec.Filter.add("(a.owner_account_id = $? OR p.id IS NOT NULL)", f.AccountID)
	spec.Filter.in("a.id", f.AudienceIDs)
	if f.NamePrefix != "" {
		spec.Filter.add(`lower(a.name) LIKE $? ESCAPE '\'`, likePrefix(f.NamePrefix))
	}
	switch f.Scope {
	case storage.AudienceScopeOwner:
		spec.Filter.add("p.id IS NULL")
	case storage.AudienceScopeShared:
		spec.Filter.add("p.id IS NOT NULL")
	}
	page, err := listPage(ctx, db.pool, spec, opts, scanAudience)
	if err != nil {
		return page, fmt.Errorf("list custom audiences of %s: %w", f.AccountID, err)
	}
	return page, nil
}

// CustomAudience returns audience id as the account sees it; a deleted one
// only when withDeleted. One it does not see is storage.ErrNotFound.
func (db *DB) CustomAudience(ctx context.Context, accountID, id string, withDeleted bool) (storage.CustomAudienceView, error) {
	v, err := scanAudience(db.pool.QueryRow(ctx, `SELECT `+audienceColumns+` FROM `+audienceFrom+`
		WHERE `+audienceVisible+` AND a.id = $2 AND (NOT a.deleted OR $3)`, accountID, id, withDeleted))
	return v, wrap("load custom audience "+id, err)
}

// lockAudience locks the live audience id the account sees (mode: UPDATE
// for the owner's changes, KEY SHARE for recording a batch) and returns it;
// else storage.ErrNotFound. The batch worker and the expiry sweep hold
// NO KEY UPDATE, which conflicts with UPDATE but not with KEY SHARE.
func lockAudience(ctx context.Context, tx pgx.Tx, accountID, id, mode string) (storage.CustomAudienceView, error) {
	v, err := scanAudience(tx.QueryRow(ctx, `SELECT `+audienceColumns+` FROM `+audienceFrom+`
		WHERE `+audienceVisible+` AND a.id = $2 AND NOT a.deleted FOR `+mode+` OF a`, accountID, id))
	return v, wrap("lock custom audience "+id, err)
}

// ownedAudience locks the live audience for a change only its owner may
// make: a READ_ONLY grant is storage.ErrAudienceReadOnly, a READ_WRITE one
// storage.ErrAudienceNotOwner.
func ownedAudience(ctx context.Context, tx pgx.Tx, accountID, id string) (storage.CustomAudienceView, error) {
	v, err := lockAudience(ctx, tx, accountID, id, "UPDATE")
	switch {
	case err != nil:
		return v, err
	case v.IsOwner:
		return v, nil
	case v.PermissionLevel == storage.PermissionReadOnly:
		return v, storage.ErrAudienceReadOnly
	}
	return v, storage.ErrAudienceNotOwner
}

// uniqueAudienceName serializes the owner's name changes and refuses a
// name another live audience of the owner has (storage.ErrConflict).
func uniqueAudienceName(ctx context.Context, tx pgx.Tx, ownerID, name, exceptID string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('custom_audience_names:' || $1))`, ownerID); err != nil {
		return wrap("lock custom audience names", err)
	}
	var taken bool
	err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM custom_audiences WHERE owner_account_id = $1 AND name = $2
		AND id <> $3 AND NOT deleted)`, ownerID, name, exceptID).Scan(&taken)
	if err != nil {
		return wrap("check custom audience name", err)
	}
	if taken {
		return fmt.Errorf("custom audience name %q: %w", name, storage.ErrConflict)
	}
	return nil
}

// CreateCustomAudience creates an empty audience owned by the account. A
// name another live audience of the account has is storage.ErrConflict.
func (db *DB) CreateCustomAudience(ctx context.Context, n storage.NewCustomAudience) (storage.CustomAudienceView, error) {
	var v storage.CustomAudienceView
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if err := uniqueAudienceName(ctx, tx, n.AccountID, n.Name, ""); err != nil {
			return err
		}
		var id string
		err := tx.QueryRow(ctx, `INSERT INTO custom_audiences (owner_account_id, name, description) VALUES ($1, $2, $3) RETURNING id`,
			n.AccountID, n.Name, n.Description).Scan(&id)
		if err != nil {
			return wrap("insert custom audience", err)
		}
		v, err = scanAudience(tx.QueryRow(ctx, `SELECT `+audienceColumns+` FROM `+audienceFrom+` WHERE a.id = $2`, n.AccountID, id))
		return wrap("load custom audience "+id, err)
	})
	if err != nil {
		return v, fmt.Errorf("create custom audience in %s: %w", n.AccountID, err)
	}
	return v, nil
}

// UpdateCustomAudience changes the name and description of an audience
// the account owns (see ownedAudience for the other accounts' errors).
func (db *DB) UpdateCustomAudience(ctx context.Context, accountID, id string, c storage.CustomAudienceChange) (storage.CustomAudienceView, error) {
	var v storage.CustomAudienceView
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		before, err := ownedAudience(ctx, tx, accountID, id)
		if err != nil {
			return err
		}
		if c.Name != nil && *c.Name != before.Name {
			if err := uniqueAudienceName(ctx, tx, accountID, *c.Name, id); err != nil {
				return err
			}
		}
		_, err = tx.Exec(ctx, `UPDATE custom_audiences SET name = COALESCE($2, name), description = COALESCE($3, description),
			updated_at = now() WHERE id = $1`, id, c.Name, c.Description)
		if err != nil {
			return wrap("update custom audience "+id, err)
		}
		v, err = lockAudience(ctx, tx, accountID, id, "UPDATE")
		return err
	})
	if err != nil {
		return v, fmt.Errorf("update custom audience %s: %w", id, err)
	}
	return v, nil
}

// DeleteCustomAudience soft-deletes an audience the account owns and
// returns it; a deleted or unseen one is storage.ErrNotFound.
func (db *DB) DeleteCustomAudience(ctx context.Context, accountID, id string) (storage.CustomAudienceView, error) {
	var v storage.CustomAudienceView
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := ownedAudience(ctx, tx, accountID, id); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE custom_audiences SET deleted = true, updated_at = now() WHERE id = $1`, id); err != nil {
			return wrap("delete custom audience "+id, err)
		}
		var err error
		v, err = scanAudience(tx.QueryRow(ctx, `SELECT `+audienceColumns+` FROM `+audienceFrom+` WHERE a.id = $2`, accountID, id))
		return wrap("load custom audience "+id, err)
	})
	if err != nil {
		return v, fmt.Errorf("delete custom audience %s: %w", id, err)
	}
	return v, nil
}

// batchColumns are read by scanBatch.
const batchColumns = `id, custom_audience_id, account_id, state, counts, created_at`

func scanBatch(row pgx.Row, tail ...any) (storage.AudienceBatch, error) {
	var b storage.AudienceBatch
	var counts []byte
	if err := row.Scan(append([]any{&b.ID, &b.AudienceID, &b.AccountID, &b.State, &counts, &b.CreatedAt}, tail...)...); err != nil {
		return b, err
	}
	if err := json.Unmarshal(counts, &b.Counts); err != nil {
		return b, fmt.Errorf("decode counts of batch %s: %w", b.ID, err)
	}
	return b, nil
}

// RecordAudienceBatch records a validated users batch for the live
// audience the account may write (its own, or granted READ_WRITE): unseen
// is storage.ErrNotFound, READ_ONLY storage.ErrAudienceReadOnly. A retry
// returns the batch recorded before (Replayed) and records nothing: with
// an idempotency key, the account's latest batch of the audience with
// that key within the retry window (another body is
// storage.ErrRequestKeyReused); without one, the audience's latest batch
// if the account recorded it without a key, with the same body, within the
// window. Recording is serialized per audience, so "latest" is the order
// the batches commit in. The audience row is only key-share locked: a
// worker applying a batch (FOR NO KEY UPDATE) does not hold it up, while
// the owner's PUT and DELETE (FOR UPDATE) wait for it and it for them.
func (db *DB) RecordAudienceBatch(ctx context.Context, n storage.NewAudienceBatch) (storage.AudienceBatch, error) {
	var b storage.AudienceBatch
	counts, err := json.Marshal(operationCounts(n.Operations))
	if err != nil {
		return b, fmt.Errorf("encode batch counts: %w", err)
	}
	ops := encodeOperations(n.Operations)
	var key *string
	if n.IdempotencyKey != "" {
		key = &n.IdempotencyKey
	}
	err = db.beginFunc(ctx, func(tx pgx.Tx) error {
		v, err := lockAudience(ctx, tx, n.AccountID, n.AudienceID, "KEY SHARE")
		if err != nil {
			return err
		}
		if !v.IsOwner && v.PermissionLevel == storage.PermissionReadOnly {
			return storage.ErrAudienceReadOnly
		}
		b, err = record(ctx, tx, audienceBatches, n.AudienceID, n.BodySHA256,
			func() (storage.AudienceBatch, string, error) { return priorAudienceBatch(ctx, tx, n) },
			func() (storage.AudienceBatch, error) {
				b, err := scanBatch(tx.QueryRow(ctx, `INSERT INTO custom_audience_batches (custom_audience_id, account_id, idempotency_key,
					body_sha256, operations, counts) VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+batchColumns,
					n.AudienceID, n.AccountID, key, n.BodySHA256, ops, counts))
				return b, wrap("insert audience batch", err)
			})
		return err
	})
	if err != nil {
		return b, fmt.Errorf("record batch of custom audience %s: %w", n.AudienceID, err)
	}
	return b, nil
}

// priorAudienceBatch is the batch n retries and its body digest, else
// storage.ErrNotFound (see RecordAudienceBatch). A keyless request matches
// only a keyless batch with its body: the digest returned is then n's.
func priorAudienceBatch(ctx context.Context, tx pgx.Tx, n storage.NewAudienceBatch) (storage.AudienceBatch, string, error) {
	var row pgx.Row
	if n.IdempotencyKey != "" {
		row = tx.QueryRow(ctx, `SELECT `+batchColumns+`, body_sha256 FROM custom_audience_batches
			WHERE custom_audience_id = $1 AND account_id = $2 AND idempotency_key = $3
			AND created_at > now() - make_interval(secs => $4)
			ORDER BY created_at DESC, seq DESC LIMIT 1`, n.AudienceID, n.AccountID, n.IdempotencyKey, n.RetryWindow.Seconds())
	} else {
		row = tx.QueryRow(ctx, `SELECT `+batchColumns+`, body_sha256 FROM (
				SELECT * FROM custom_audience_batches WHERE custom_audience_id = $1 ORDER BY seq DESC LIMIT 1) b
			WHERE account_id = $2 AND idempotency_key IS NULL AND body_sha256 = $3
			AND created_at > now() - make_interval(secs => $4)`, n.AudienceID, n.AccountID, n.BodySHA256, n.RetryWindow.Seconds())
	}
	var bodySHA string
	b, err := scanBatch(row, &bodySHA)
	if err != nil {
		return b, "", wrap("find prior audience batch", err)
	}
	b.Replayed = true
	return b, bodySHA, nil
}

// operationCounts is a batch's answer: every user of each operation counts.
func operationCounts(ops []storage.AudienceOperation) []storage.AudienceOperationCount {
	out := make([]storage.AudienceOperationCount, len(ops))
	for i, op := range ops {
		out[i] = storage.AudienceOperationCount{OperationType: op.Type, SuccessCount: op.Users, TotalCount: op.Users}
	}
	return out
}

// ApplyAudienceBatch applies a pending batch in one transaction
// (applyBatch): the audience row locked (FOR NO KEY UPDATE), the batch
// skipped unless PENDING, check run on its operations (an error marks the
// batch FAILED with the error's text, which the result reports), else the
// operations applied in order (Update adds or refreshes members, merging
// those a user object joins, Delete removes the members it names:
// ads_audience_people.go), audience_size moved by exactly the members
// (people) created, deleted and merged, and the batch marked APPLIED.
// Any failure rolls everything back.
func (db *DB) ApplyAudienceBatch(ctx context.Context, batchID string, check func([]storage.AudienceOperation) error) (storage.AudienceBatchResult, error) {
	var res storage.AudienceBatchResult
	owner, claimed, err := db.applyBatch(ctx, audienceBatches, batchID, batchApply{
		// NO KEY UPDATE: one writer of the members at a time (other
		// workers, the expiry sweep) and none of the owner's changes (FOR
		// UPDATE), while recording new batches (KEY SHARE) and targeting the
		// audience (its foreign keys) go on during a long apply.
		lock: func(ctx context.Context, tx pgx.Tx, audience string) error {
			err := tx.QueryRow(ctx, `SELECT audience_size FROM custom_audiences WHERE id = $1 FOR NO KEY UPDATE`, audience).Scan(&res.SizeNow)
			return wrap("lock custom audience "+audience, err)
		},
		apply: func(ctx context.Context, tx pgx.Tx, audience string, batches []claimedBatch) (storage.BatchState, *string, error) {
			res.Audience = audience
			state, failure, err := applyAudienceOperations(ctx, tx, &res, batches[0].ops, check)
			if err != nil || state != storage.BatchApplied {
				return state, failure, err
			}
			return state, failure, recordBatchMembers(ctx, tx, batches[0].id, res)
		},
	})
	res.Audience, res.Skipped = owner, err == nil && claimed == 0
	return res, err
}

// applyAudienceOperations applies one claimed batch's stored operations
// to res.Audience and returns the state the batch settles in.
func applyAudienceOperations(ctx context.Context, tx pgx.Tx, res *storage.AudienceBatchResult, raw []byte,
	check func([]storage.AudienceOperation) error) (storage.BatchState, *string, error) {
	ops, err := decodeOperations(raw)
	if err != nil {
		return "", nil, err
	}
	if err := check(ops); err != nil {
		res.Failed, res.Failure = true, err.Error()
		return storage.BatchFailed, &res.Failure, nil
	}
	if err = applyOperations(ctx, tx, res, ops); err != nil {
		return "", nil, err
	}
	err = tx.QueryRow(ctx, `UPDATE custom_audiences SET audience_size = audience_size + $2,
			members_expire_at = LEAST(members_expire_at, $3) WHERE id = $1 RETURNING audience_size`,
		res.Audience, res.Added-res.Removed-res.Merged, earliestExpiry(ops)).Scan(&res.SizeNow)
	if err != nil {
		return "", nil, wrap("count custom audience "+res.Audience, err)
	}
	return storage.BatchApplied, nil, nil
}

// recordBatchMembers keeps what applying batch id did to the audience's
// members, for the console's batch history.
func recordBatchMembers(ctx context.Context, tx pgx.Tx, id string, res storage.AudienceBatchResult) error {
	_, err := tx.Exec(ctx, `UPDATE custom_audience_batches SET members_added = $2, members_removed = $3, members_merged = $4
		WHERE id = $1`, id, res.Added, res.Removed, res.Merged)
	return wrap("record members of audience batch "+id, err)
}

// AudiencesWithExpiredMembers returns up to limit audiences holding
// members expired at now.
func (db *DB) AudiencesWithExpiredMembers(ctx context.Context, now time.Time, limit int) ([]string, error) {
	// The audiences whose earliest expiry has passed (an index range), not
	// a scan of the members.
	return queryStrings(ctx, db.pool, "list custom audiences with expired members",
		`SELECT id FROM custom_audiences WHERE members_expire_at <= $1 ORDER BY members_expire_at LIMIT $2`, now, limit)
}

// RemoveExpiredAudienceMembers deletes up to limit members (people, with
// all their keys) of the audience expired at now and lowers its
// audience_size by as many, in one
// transaction under the audience's lock (FOR NO KEY UPDATE, as the batch
// worker); it returns how many it removed.
func (db *DB) RemoveExpiredAudienceMembers(ctx context.Context, audienceID string, now time.Time, limit int) (int64, error) {
	var n int64
	err := db.beginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT 1 FROM custom_audiences WHERE id = $1 FOR NO KEY UPDATE`, audienceID); err != nil {
			return wrap("lock custom audience "+audienceID, err)
		}
		// Whole members: the expired anchors, and every row of theirs (a
		// member's rows share their times).
		var err error
		n, err = removeMembers(ctx, tx, audienceID, `SELECT member_key, person_key FROM custom_audience_members
			WHERE audience_id = $1 AND expires_at <= $2 AND (person_key IS NULL OR person_key = member_key) LIMIT $3`, now, limit)
		if err != nil {
			return wrap("delete expired members of custom audience "+audienceID, err)
		}
		// When this round removed every expired member, the earliest expiry
		// is that of the members left (one pass over them, once per expiry).
		_, err = tx.Exec(ctx, `UPDATE custom_audiences SET audience_size = audience_size - $2,
				members_expire_at = CASE WHEN $2 < $3 THEN (SELECT min(expires_at) FROM custom_audience_members WHERE audience_id = $1)
					ELSE members_expire_at END
			WHERE id = $1`, audienceID, n, limit)
		return wrap("lower size of custom audience "+audienceID, err)
	})
	if err != nil {
		return 0, fmt.Errorf("remove expired members of custom audience %s: %w", audienceID, err)
	}
	return n, nil
}

// earliestExpiry is the earliest expires_at of the members ops add (nil
// when it adds none): the batch lowers its audience's members_expire_at
// to it.
func earliestExpiry(ops []storage.AudienceOperation) *time.Time {
	var earliest *time.Time
	for _, op := range ops {
		if op.Type != storage.AudienceUpdate || len(op.Keys) == 0 {
			continue
		}
		if earliest == nil || op.ExpiresAt.Before(*earliest) {
			at := op.ExpiresAt
			earliest = &at
		}
	}
	return earliest
}

// operationsVersion is the first byte of an encoded batch: 2 since user
// objects of several keys are recorded (batches of version 1, recorded
// before, read as one user object per key).
const operationsVersion = 2

// encodeOperations is the stored form of a batch: the version, the
// operation count, then per operation its type (0 Update, 1 Delete), the
// effective and expiry times (Unix microseconds), the user count, the key
// count and the keys (33 bytes each), then the count of user objects of
// several keys and each one's first key and key count. Varints throughout.
func encodeOperations(ops []storage.AudienceOperation) []byte {
	size := 1 + binary.MaxVarintLen64
	for _, op := range ops {
		size += 1 + 5*binary.MaxVarintLen64 + len(op.Keys)*len(storage.MemberKey{}) + 2*binary.MaxVarintLen32*len(op.People)
	}
	b := make([]byte, 0, size)
	b = append(b, operationsVersion)
	b = binary.AppendUvarint(b, uint64(len(ops)))
	for _, op := range ops {
		kind := byte(0)
		if op.Type == storage.AudienceDelete {
			kind = 1
		}
		b = append(b, kind)
		b = binary.AppendVarint(b, op.EffectiveAt.UnixMicro())
		b = binary.AppendVarint(b, op.ExpiresAt.UnixMicro())
		b = binary.AppendUvarint(b, uint64(op.Users))
		b = binary.AppendUvarint(b, uint64(len(op.Keys)))
		for k := range op.Keys {
			b = append(b, op.Keys[k][:]...)
		}
		b = binary.AppendUvarint(b, uint64(len(op.People)))
		for _, r := range op.People {
			b = binary.AppendUvarint(b, uint64(r.Start))
			b = binary.AppendUvarint(b, uint64(r.End-r.Start))
		}
	}
	return b
}

// opReader reads an encoded batch.
type opReader struct {
	b   []byte
	err error
}

func (r *opReader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *opReader) varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = errors.New("truncated varint")
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *opReader) byte() byte {
	if len(r.b) == 0 {
		r.err = errors.New("truncated batch")
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// decodeOperations reads what encodeOperations wrote.
func decodeOperations(raw []byte) ([]storage.AudienceOperation, error) {
	r := &opReader{b: raw}
	version := r.byte()
	if version != 1 && version != operationsVersion {
		return nil, fmt.Errorf("decode batch: version %d", version)
	}
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, fmt.Errorf("decode batch: operation count: %v", r.err)
	}
	ops := make([]storage.AudienceOperation, 0, n)
	for range n {
		op := storage.AudienceOperation{Type: storage.AudienceUpdate}
		if r.byte() == 1 {
			op.Type = storage.AudienceDelete
		}
		op.EffectiveAt = time.UnixMicro(r.varint()).UTC()
		op.ExpiresAt = time.UnixMicro(r.varint()).UTC()
		op.Users = int(r.uvarint())
		keys := r.uvarint()
		width := uint64(len(storage.MemberKey{}))
		if r.err != nil || keys > uint64(len(r.b))/width {
			return nil, fmt.Errorf("decode batch: operation %d: truncated (%v)", len(ops), r.err)
		}
		op.Keys = make([]storage.MemberKey, keys)
		for k := range op.Keys {
			copy(op.Keys[k][:], r.b[uint64(k)*width:])
		}
		r.b = r.b[keys*width:]
		if version > 1 {
			if op.People, r.err = r.people(keys); r.err != nil {
				return nil, fmt.Errorf("decode batch: operation %d: %w", len(ops), r.err)
			}
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// people reads the user objects of several keys of an operation of keys
// keys (nil when there are none).
func (r *opReader) people(keys uint64) ([]storage.KeyRange, error) {
	n := r.uvarint()
	if r.err != nil || n > uint64(len(r.b)) {
		return nil, fmt.Errorf("people count: %v", r.err)
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]storage.KeyRange, n)
	for i := range out {
		start, count := r.uvarint(), r.uvarint()
		if r.err != nil || count < 2 || start > keys || count > keys-start {
			return nil, fmt.Errorf("person %d: keys %d+%d of %d (%v)", i, start, count, keys, r.err)
		}
		out[i] = storage.KeyRange{Start: int32(start), End: int32(start + count)}
	}
	return out, nil
}
