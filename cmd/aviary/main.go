// Command aviary runs every tier of Aviary from one binary:
//
//	aviary api      the HTTP tier
//	aviary worker   an asynq worker (plus the sweepers)
//	aviary dev      migrate, then api + worker + sweepers in one process
//	aviary migrate  apply database migrations (idempotent)
//	aviary admin    manage apps, users, tokens and user states
//
// Settings come from AVIARY_* environment variables; every one has a flag of
// the same name that overrides it (aviary api -h lists them).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "aviary:", err)
		}
		os.Exit(2)
	}
}

const usage = `usage: aviary <command> [flags]

commands:
  api       serve the HTTP API
  worker    process queued tasks
  dev       migrate, then run api, worker and sweepers in one process
  migrate   apply database migrations
  admin     manage apps, users and tokens (aviary admin help)
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no command given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "api":
		return runAPI(ctx, rest, stderr)
	case "worker":
		return runWorker(ctx, rest, stderr)
	case "dev":
		return runDev(ctx, rest, stderr)
	case "migrate":
		return runMigrate(ctx, rest, stdout, stderr)
	case "admin":
		return runAdmin(ctx, rest, stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", cmd)
}

// parseFlags builds a subcommand's flag set with every config setting,
// parses args and validates the result.
func parseFlags(name string, args []string, stderr io.Writer) (*config, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("aviary "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg, err := bindConfig(fs)
	if err != nil {
		return nil, nil, err
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, nil, err
	}
	return cfg, fs, nil
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, _, err := parseFlags("migrate", args, stderr)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	return migrate(ctx, cfg, func(applied []string) {
		for _, name := range applied {
			log.Info("migration applied", "name", name)
		}
		fmt.Fprintf(stdout, "migrations: %d applied, schema up to date\n", len(applied))
	})
}
