package storagetest

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/minio/minio-go/v7"
)

// TestPrivateServicesRestart restarts a private PostgreSQL and a private
// MinIO and checks that each serves again with what it held before.
func TestPrivateServicesRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup prepares state and returns a restart and a check of the
		// state after it.
		setup func(t *testing.T) (restart func(), check func(t *testing.T))
	}{
		{"postgres", func(t *testing.T) (func(), func(*testing.T)) {
			pg := PrivatePostgres(t)
			ctx := context.Background()
			exec := func(t *testing.T, sql string) int64 {
				conn, err := pgx.Connect(ctx, pg.URL)
				if err != nil {
					t.Fatalf("connect: %v", err)
				}
				defer conn.Close(ctx)
				var n int64
				if err := conn.QueryRow(ctx, sql).Scan(&n); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
				return n
			}
			conn, err := pgx.Connect(ctx, pg.URL)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conn.Exec(ctx, `CREATE TABLE kept (n int); INSERT INTO kept VALUES (1), (2)`); err != nil {
				t.Fatal(err)
			}
			conn.Close(ctx)
			return pg.Restart, func(t *testing.T) {
				if n := exec(t, `SELECT count(*) FROM kept`); n != 2 {
					t.Errorf("%d rows after the restart, want 2", n)
				}
			}
		}},
		{"minio", func(t *testing.T) (func(), func(*testing.T)) {
			m := PrivateMinIO(t)
			bucket := m.Bucket(t)
			ctx := context.Background()
			if _, err := m.Client(t).PutObject(ctx, bucket, "a/b", bytes.NewReader([]byte("kept")), 4, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
			return m.Restart, func(t *testing.T) {
				obj, err := m.Client(t).GetObject(ctx, bucket, "a/b", minio.GetObjectOptions{})
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(obj)
				if err != nil || string(b) != "kept" {
					t.Errorf("object after the restart: %q, %v", b, err)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restart, check := tc.setup(t)
			restart()
			check(t)
			restart()
			check(t)
		})
	}
}
