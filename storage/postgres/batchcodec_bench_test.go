package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/postgres"
	"github.com/aviary-dev/aviary/storage/storagetest"
)

// benchBatch is the batch of BenchmarkAudienceBatch: 2500 Update
// operations of 24 single-email users each (60,000 keys).
func benchBatch() []storage.AudienceOperation {
	at := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	ops := make([]storage.AudienceOperation, 2500)
	for i := range ops {
		keys := make([]storage.MemberKey, 24)
		for k := range keys {
			keys[k][0] = 1
			_, _ = rand.Read(keys[k][1:])
		}
		ops[i] = storage.AudienceOperation{Type: storage.AudienceUpdate, EffectiveAt: at, ExpiresAt: at.Add(30 * 24 * time.Hour), Users: 24, Keys: keys}
	}
	return ops
}

// jsonOperation is the plain JSON form of an operation: keys as []byte
// (base64 strings), the rest as encoding/json writes it.
type jsonOperation struct {
	Type        string             `json:"type"`
	EffectiveAt time.Time          `json:"effective_at"`
	ExpiresAt   time.Time          `json:"expires_at"`
	Users       int                `json:"users"`
	Keys        [][]byte           `json:"keys"`
	People      []storage.KeyRange `json:"people,omitempty"`
}

func encodeJSON(ops []storage.AudienceOperation) ([]byte, error) {
	out := make([]jsonOperation, len(ops))
	for i, op := range ops {
		keys := make([][]byte, len(op.Keys))
		for k := range op.Keys {
			keys[k] = op.Keys[k][:]
		}
		out[i] = jsonOperation{Type: op.Type, EffectiveAt: op.EffectiveAt, ExpiresAt: op.ExpiresAt, Users: op.Users, Keys: keys, People: op.People}
	}
	return json.Marshal(out)
}

func decodeJSON(raw []byte) ([]storage.AudienceOperation, error) {
	var in []jsonOperation
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	ops := make([]storage.AudienceOperation, len(in))
	for i, op := range in {
		keys := make([]storage.MemberKey, len(op.Keys))
		for k := range op.Keys {
			copy(keys[k][:], op.Keys[k])
		}
		ops[i] = storage.AudienceOperation{Type: op.Type, EffectiveAt: op.EffectiveAt, ExpiresAt: op.ExpiresAt, Users: op.Users, Keys: keys, People: op.People}
	}
	return ops, nil
}

// BenchmarkBatchEncoding is the recording and loading of a 60,000-key users
// batch's operations: encode, INSERT in a transaction, SELECT back and
// decode, with the binary form Aviary stores (encodeOperations) against
// plain JSON in the same bytea column and in a jsonb one
// (docs/clever-parts.md). stored-bytes is the encoded size.
func BenchmarkBatchEncoding(b *testing.B) {
	_, dbURL := storagetest.NewDB(b)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(ctx) })
	if _, err := conn.Exec(ctx, `CREATE TABLE bench_batches (id bigserial PRIMARY KEY, operations bytea, doc jsonb)`); err != nil {
		b.Fatal(err)
	}
	ops := benchBatch()
	variants := []struct {
		name   string
		column string
		encode func([]storage.AudienceOperation) ([]byte, error)
		decode func([]byte) ([]storage.AudienceOperation, error)
	}{
		{"binary", "operations", func(ops []storage.AudienceOperation) ([]byte, error) { return postgres.EncodeOperations(ops), nil }, postgres.DecodeOperations},
		{"json", "operations", encodeJSON, decodeJSON},
		{"jsonb", "doc", encodeJSON, decodeJSON},
	}
	for _, v := range variants {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				raw, err := v.encode(ops)
				if err != nil {
					b.Fatal(err)
				}
				size = len(raw)
				var id int64
				err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
					var arg any = raw
					if v.column == "doc" {
						arg = string(raw)
					}
					return tx.QueryRow(ctx, `INSERT INTO bench_batches (`+v.column+`) VALUES ($1) RETURNING id`, arg).Scan(&id)
				})
				if err != nil {
					b.Fatal(err)
				}
				back, err := loadBatch(ctx, conn, v.column, id)
				if err != nil {
					b.Fatal(err)
				}
				got, err := v.decode(back)
				if err != nil || len(got) != len(ops) || got[len(got)-1].Keys[23] != ops[len(ops)-1].Keys[23] {
					b.Fatalf("round trip: %d operations, %v", len(got), err)
				}
				b.StopTimer()
				if _, err := conn.Exec(ctx, `DELETE FROM bench_batches WHERE id = $1`, id); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(size), "stored-bytes")
		})
	}
}

// loadBatch reads the stored operations of batch id from column.
func loadBatch(ctx context.Context, conn *pgx.Conn, column string, id int64) ([]byte, error) {
	if column == "doc" {
		var text string
		err := conn.QueryRow(ctx, `SELECT doc::text FROM bench_batches WHERE id = $1`, id).Scan(&text)
		return []byte(text), err
	}
	var raw []byte
	err := conn.QueryRow(ctx, `SELECT operations FROM bench_batches WHERE id = $1`, id).Scan(&raw)
	return raw, err
}
