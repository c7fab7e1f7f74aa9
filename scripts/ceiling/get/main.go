// Command get is the ceiling of the request path (docs/benchmarks.md): a bare
// net/http server whose GET /2/compliance/jobs/{id} does only what no
// implementation can skip (scripts/ceiling/getjob): one primary-key read of
// the job row with pgx (a pgxpool with its default size, like Aviary's) and
// the JSON answer.
//
//	go run ./scripts/ceiling/get -db postgres://... -addr 127.0.0.1:9090
package main

import (
	"context"
	"flag"
	"log"
	"net/http"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/aviary-dev/aviary/scripts/ceiling/getjob"
)

func main() {
	dbURL := flag.String("db", "", "PostgreSQL URL (the Aviary database)")
	addr := flag.String("addr", "127.0.0.1:9090", "listen address")
	flag.Parse()
	pool, err := pgxpool.New(context.Background(), *dbURL)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(http.ListenAndServe(*addr, getjob.Handler(pool)))
}
