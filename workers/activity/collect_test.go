package activity_test

import "github.com/jackc/pgx/v5"

func collect(rows pgx.Rows) ([]int64, error) {
	return pgx.CollectRows(rows, pgx.RowTo[int64])
}
