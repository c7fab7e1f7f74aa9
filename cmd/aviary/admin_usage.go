package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/aviary-dev/aviary/storage"
	"github.com/aviary-dev/aviary/storage/ids"
	"github.com/aviary-dev/aviary/storage/postgres"
)

// usageFlags are app usage's --read-cap and --write-cap and app credits'
// --add (docs/usage-and-credits.md).
type usageFlags struct {
	ReadCap, WriteCap, Add int64
}

func (u *usageFlags) bind(fs *flag.FlagSet) {
	fs.Int64Var(&u.ReadCap, "read-cap", 0, "app usage: posts the app may read per usage period (0: unlimited, -1: the server default)")
	fs.Int64Var(&u.WriteCap, "write-cap", 0, "app usage: posts the app may create per usage period (0: unlimited, -1: the server default)")
	fs.Int64Var(&u.Add, "add", 0, "app credits: credits to add (negative: take away)")
}

// usageReport is what app usage and app credits print. Caps are null when
// the app uses the server's default (AVIARY_USAGE_*); the usage and the
// credits spent are as recorded in PostgreSQL (an API process records what
// it counts every AVIARY_USAGE_FLUSH_INTERVAL).
type usageReport struct {
	AppID          string `json:"app_id"`
	Name           string `json:"name"`
	ReadCap        *int64 `json:"read_cap"`
	WriteCap       *int64 `json:"write_cap"`
	CreditsAdded   int64  `json:"credits_added"`
	CreditsSpent   int64  `json:"credits_spent"`
	CreditsBalance int64  `json:"credits_balance"`
	Last30Days     struct {
		PostsRead    int64 `json:"posts_read"`
		PostsWritten int64 `json:"posts_written"`
		UsersRead    int64 `json:"users_read"`
	} `json:"last_30_days"`
}

// usageCommand runs app usage (set the given caps, print) and app credits
// (add the given credits, print).
func usageCommand(ctx context.Context, db *postgres.DB, verb string, o adminFlags) (any, error) {
	app, err := requiredApp(ctx, db, o)
	if err != nil {
		return nil, err
	}
	switch verb {
	case "app usage":
		var readCap, writeCap *int64
		if o.Given["read-cap"] {
			readCap = &o.Usage.ReadCap
		}
		if o.Given["write-cap"] {
			writeCap = &o.Usage.WriteCap
		}
		if readCap != nil || writeCap != nil {
			if _, err := db.SetAppUsageCaps(ctx, app.ID, readCap, writeCap); err != nil {
				return nil, err
			}
		}
	case "app credits":
		if o.Given["add"] {
			if _, err := db.AddAppCredits(ctx, app.ID, o.Usage.Add); err != nil {
				return nil, err
			}
		}
	}
	return usageReportOf(ctx, db, app)
}

func usageReportOf(ctx context.Context, db *postgres.DB, app storage.App) (usageReport, error) {
	s, err := db.AppUsageSettings(ctx, app.ID)
	if err != nil {
		return usageReport{}, err
	}
	all, err := db.UsageSince(ctx, app.ID, time.Time{})
	if err != nil {
		return usageReport{}, err
	}
	recent, err := db.UsageSince(ctx, app.ID, time.Now().UTC().AddDate(0, 0, -29))
	if err != nil {
		return usageReport{}, fmt.Errorf("recent usage: %w", err)
	}
	r := usageReport{AppID: ids.Format(app.ID), Name: app.Name, ReadCap: s.ReadCap, WriteCap: s.WriteCap,
		CreditsAdded: s.CreditsAdded, CreditsSpent: all.CreditsSpent, CreditsBalance: s.CreditsAdded - all.CreditsSpent}
	r.Last30Days.PostsRead, r.Last30Days.PostsWritten, r.Last30Days.UsersRead = recent.PostsRead, recent.PostsWritten, recent.UsersRead
	return r, nil
}
