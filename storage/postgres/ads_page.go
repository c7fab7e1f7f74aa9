package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/aviary-dev/aviary/storage"
)

// filter collects the WHERE clauses of an ads list and their arguments;
// "$?" in a clause is replaced by the argument's placeholder.
type filter struct {
	clauses []string
	args    []any
}

// add appends clause with its arguments, one per "$?".
func (f *filter) add(clause string, args ...any) {
	for _, a := range args {
		f.args = append(f.args, a)
		clause = strings.Replace(clause, "$?", "$"+strconv.Itoa(len(f.args)), 1)
	}
	f.clauses = append(f.clauses, clause)
}

// in adds "column = ANY(values)" when values is non-empty.
func (f *filter) in(column string, values []string) {
	if len(values) > 0 {
		f.add(column+" = ANY($?)", values)
	}
}

func (f *filter) where() string {
	if len(f.clauses) == 0 {
		return "TRUE"
	}
	return strings.Join(f.clauses, " AND ")
}

// listSpec is one ads list query: the listing it serves (whose fields
// sortColumns maps), the table (or join) it reads, the columns its scan
// function reads, the id column rows tie-break on and the soft-delete
// column.
type listSpec struct {
	Listing storage.Listing
	From    string
	Columns string
	ID      string
	// Deleted is the soft-delete condition's column ("" for none); rows
	// with it true are left out unless ListOptions.WithDeleted.
	Deleted string
	Filter  filter
}

// rowScanner reads one row; tail are extra destinations after its own
// columns (the pager's sort value and id).
type rowScanner[T any] func(row pgx.Row, tail ...any) (T, error)

// listPage runs one page of an ads list: keyset pagination on (sort
// column, id), so a page boundary stays put while rows are inserted
// (a new row lands before or after it and is seen at most once), one row
// more than asked to learn whether another page follows, and the count
// of matching rows when asked for.
func listPage[T any](ctx context.Context, q querier, spec listSpec, opts storage.ListOptions, scan rowScanner[T]) (storage.Page[T], error) {
	var page storage.Page[T]
	col, err := sortColumnOf(spec.Listing, opts.Sort)
	if err != nil {
		return page, fmt.Errorf("list %s: %w", spec.From, err)
	}
	f := spec.Filter
	if spec.Deleted != "" && !opts.WithDeleted {
		f.add("NOT " + spec.Deleted)
	}
	if opts.WithTotal {
		var n int64
		if err := q.QueryRow(ctx, `SELECT count(*) FROM `+spec.From+` WHERE `+f.where(), f.args...).Scan(&n); err != nil {
			return page, wrap("count "+spec.From, err)
		}
		page.Total = &n
	}
	sortCol, id := col.Expr, spec.ID
	cmp, dir := ">", "ASC"
	if opts.Sort.Desc {
		cmp, dir = "<", "DESC"
	}
	if opts.After != nil {
		f.add(fmt.Sprintf("(%s, %s) %s ($?::%s, $?)", sortCol, id, cmp, col.Type), opts.After.Value, opts.After.ID)
	}
	f.args = append(f.args, opts.Count+1)
	// The sort value and id are named apart so ORDER BY's names resolve to
	// the table's columns, not to these output columns.
	sql := fmt.Sprintf(`SELECT %s, (%s)::text AS aviary_sort_value, %s AS aviary_sort_id FROM %s WHERE %s ORDER BY %s %s, %s %s LIMIT $%d`,
		spec.Columns, sortCol, id, spec.From, f.where(), sortCol, dir, id, dir, len(f.args))
	rows, err := q.Query(ctx, sql, f.args...)
	if err != nil {
		return page, wrap("list "+spec.From, err)
	}
	defer rows.Close()
	var last storage.Position
	for rows.Next() {
		var pos storage.Position
		item, err := scan(rows, &pos.Value, &pos.ID)
		if err != nil {
			return page, wrap("scan "+spec.From, err)
		}
		if len(page.Items) == opts.Count {
			page.Next = &last
			break
		}
		page.Items = append(page.Items, item)
		last = pos
	}
	if err := rows.Err(); err != nil {
		return page, wrap("list "+spec.From, err)
	}
	return page, nil
}

// querier is what a list runs on: the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// queryStrings runs a query of one text column and returns its values;
// what names it in errors.
func queryStrings(ctx context.Context, q querier, what, sql string, args ...any) ([]string, error) {
	rows, err := q.Query(ctx, sql, args...)
	if err != nil {
		return nil, wrap(what, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, wrap(what, err)
}
