package main

import (
	"context"

	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// setUserAdmin makes the user named by o.Args (<id|username> on|off) a
// console administrator or not (docs/console.md). The console reads the
// flag on every request, so nothing is announced.
func setUserAdmin(ctx context.Context, db *postgres.DB, o adminFlags) (any, error) {
	if err := wantArgs(o, 2, "<id|username> on|off"); err != nil {
		return nil, err
	}
	on, err := parseOnOff(o.Args[1])
	if err != nil {
		return nil, err
	}
	u, err := findUser(ctx, db, o.Args[0])
	if err != nil {
		return nil, err
	}
	if err := db.SetUserAdmin(ctx, u.ID, on); err != nil {
		return nil, err
	}
	return map[string]any{"user_id": ids.Format(u.ID), "username": u.Username, "console_admin": on}, nil
}
