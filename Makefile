# Aviary developer entry points.
#
#   make run        install/start local deps, build, migrate, bootstrap demo data, serve
#   make test       what CI runs (.ci/run): deps (+ Chromium) + tools, go vet, go test
#   make lint       gofmt check + go vet
#   make bench      scripts/bench
#   make load       scripts/load: a fixed-rate mix for 10 minutes on its own stack (docs/load.md)
#   make faults     the full fault matrix (issue 32, docs/fault-matrix.md; about an hour)
#   make fuzz       scripts/fuzz: every fuzz target, FUZZ_EXECS (default 1000000) executions each
#   make tools      build the MinIO binary the tests use (minutes, once)
#   make docker-up  the whole stack in Docker Compose
#
# Every variable below can be overridden on the command line or from the
# environment, e.g. `make test AVIARY_TOOLS_DIR=/opt/aviary-tools`.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

# Use the usual install location of Go when `go` is not on PATH.
ifeq ($(shell command -v go 2>/dev/null),)
export PATH := $(PATH):/usr/local/go/bin
endif

# When this machine has no Go as new as go.mod asks for (a fresh Debian/Ubuntu
# has none, or apt's 1.19), scripts/ensure-deps (the `deps` step of run, test
# and bench) installs the official toolchain into GO_TOOLCHAIN_DIR, by default
# $(AVIARY_TOOLS_DIR)/../go<version>; ensure-deps computes the path (from
# go.mod) so both agree. Its bin/ goes first on PATH here.
#
# On purpose not guarded by $(wildcard): ensure-deps runs as a child of make,
# after this file has been parsed, and cannot change make's PATH. Recipe lines
# are run by bash, which looks `go` up on PATH when each line runs, so an entry
# for a directory that does not exist yet is harmless and takes effect as soon
# as `deps` has created it: the build/tools/test steps that follow `deps` in
# the same make run already use the new toolchain, with no second make run.
GO_TOOLCHAIN_DIR ?= $(shell $(if $(AVIARY_TOOLS_DIR),AVIARY_TOOLS_DIR='$(AVIARY_TOOLS_DIR)') bash scripts/ensure-deps --print-go-dir 2>/dev/null)
GO_TOOLCHAIN_DIR := $(GO_TOOLCHAIN_DIR)
export GO_TOOLCHAIN_DIR
ifneq ($(strip $(GO_TOOLCHAIN_DIR)),)
export PATH := $(abspath $(GO_TOOLCHAIN_DIR))/bin:$(PATH)
endif

GO             ?= go
GOFMT          ?= gofmt
DOCKER_COMPOSE ?= docker compose
BENCH_CMD      ?= bash scripts/bench
# Flags of scripts/load, e.g. make load LOAD_FLAGS='-rate 60 -duration 2m -out var/load.md'.
LOAD_FLAGS     ?=
FUZZ_CMD       ?= bash scripts/fuzz
DEPS_CMD       ?= bash scripts/ensure-deps

# Where the tests look for helper binaries (MinIO); exported so the tests and
# this Makefile always agree.
AVIARY_TOOLS_DIR ?= $(HOME)/.cache/aviary/bin
export AVIARY_TOOLS_DIR
MINIO_MODULE  ?= github.com/minio/minio
# AVIARY_VERSION is the build's version (x-aviary-version, /_aviary/health):
# the commit, "+dirty" with local changes.
AVIARY_VERSION ?= $(shell git describe --always --dirty=+dirty --abbrev=12 2>/dev/null || echo dev)
MINIO_VERSION ?= v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_BIN     ?= $(AVIARY_TOOLS_DIR)/minio

BIN_DIR          ?= bin
AVIARY_BIN       ?= $(BIN_DIR)/aviary
VAR_DIR          ?= var
DEMO_CREDENTIALS ?= $(VAR_DIR)/demo-credentials.json

TEST_PKGS  ?= ./...
TEST_FLAGS ?= -count=1 -p 2 -timeout 25m

# Settings for `make run` (passed to the aviary commands it starts). The
# /admin/queues credentials default to admin/aviary for local development.
AVIARY_PUBLIC_URL     ?= http://localhost:8080
AVIARY_SANDBOX_PUBLIC_URL ?= http://localhost:8081
AVIARY_ADMIN_USER     ?= admin
AVIARY_ADMIN_PASSWORD ?= aviary
# A local stack holds few posts: every one feeds the related keywords of
# keyword insights (production default: one in 16; docs/insights.md).
AVIARY_INSIGHTS_PAIR_SAMPLE ?= 1
# Webhook receivers on this machine (http://localhost:PORT/...) may be
# registered without a tunnel (development only; docs/webhooks.md).
AVIARY_WEBHOOK_ALLOW ?= localhost:*,127.0.0.1:*
RUN_ENV ?= AVIARY_PUBLIC_URL='$(AVIARY_PUBLIC_URL)' AVIARY_SANDBOX_PUBLIC_URL='$(AVIARY_SANDBOX_PUBLIC_URL)' AVIARY_ADMIN_USER='$(AVIARY_ADMIN_USER)' AVIARY_ADMIN_PASSWORD='$(AVIARY_ADMIN_PASSWORD)' AVIARY_INSIGHTS_PAIR_SAMPLE='$(AVIARY_INSIGHTS_PAIR_SAMPLE)' AVIARY_WEBHOOK_ALLOW='$(AVIARY_WEBHOOK_ALLOW)'

.PHONY: build deps deps-test tools run test lint bench load faults fuzz docker-up clean help

build:
	$(GO) build -ldflags "-X main.version=$(AVIARY_VERSION)" -o $(AVIARY_BIN) ./cmd/aviary

deps:
	@$(DEPS_CMD)

# deps plus what only the tests need (Chromium for the browser tests of the
# consent pages, docs/oauth.md "Browser tests"); `make run` does not need it.
deps-test:
	@$(DEPS_CMD) --for-tests

# MinIO is built from source with `go install` (the only registry reachable
# from dev/CI machines is the Go module proxy); skipped when already there.
tools:
	@if [ -x "$(MINIO_BIN)" ]; then \
		exit 0; \
	fi; \
	echo "tools: building MinIO $(MINIO_VERSION) into $(AVIARY_TOOLS_DIR)"; \
	echo "tools: this takes several minutes the first time (it is cached afterwards)"; \
	mkdir -p "$(AVIARY_TOOLS_DIR)"; \
	GOBIN="$(AVIARY_TOOLS_DIR)" $(GO) install $(MINIO_MODULE)@$(MINIO_VERSION); \
	echo "tools: built $(MINIO_BIN)"

run: deps build
	@mkdir -p "$(VAR_DIR)"
	$(RUN_ENV) $(AVIARY_BIN) migrate
	$(RUN_ENV) $(AVIARY_BIN) admin bootstrap --json > "$(DEMO_CREDENTIALS).tmp" || { rm -f "$(DEMO_CREDENTIALS).tmp"; exit 1; }
	@mv "$(DEMO_CREDENTIALS).tmp" "$(DEMO_CREDENTIALS)"
	@f="$(DEMO_CREDENTIALS)"; url="$(AVIARY_PUBLIC_URL)"; url="$${url%/}"; \
	field() { \
		if command -v jq >/dev/null 2>&1; then \
			jq -r --arg k "$$1" '(.[$$k] // "") | tostring' "$$f"; \
		elif command -v python3 >/dev/null 2>&1; then \
			python3 -c 'import json,sys; v=json.load(open(sys.argv[1])).get(sys.argv[2]); print("" if v is None else v)' "$$f" "$$1"; \
		else \
			tr -d '\n' < "$$f" | sed -n 's/.*"'"$$1"'"[[:space:]]*:[[:space:]]*"\{0,1\}\([^",}]*\).*/\1/p'; \
		fi; \
	}; \
	bearer="$$(field bearer_token)"; \
	echo; \
	echo "== Aviary demo credentials (saved in $$f) =="; \
	for k in consumer_key consumer_secret bearer_token access_token access_token_secret user_id username password client_id client_secret callback_url ads_account_id funding_instrument_id; do \
		printf '  %-20s %s\n' "$$k" "$$(field "$$k")"; \
	done; \
	echo; \
	echo "== URLs (once the server below is up) =="; \
	echo "  API base      $$url   (v2 endpoints under $$url/2/, ads API under $$url/12/)"; \
	echo "  ads sandbox   $(AVIARY_SANDBOX_PUBLIC_URL)/12/   (OAuth 1.0a; POST /12/accounts creates a sandbox account)"; \
	echo "  health        $$url/healthz"; \
	echo "  readiness     $$url/readyz"; \
	echo "  metrics       $$url/metrics"; \
	echo "  queue admin   $$url/admin/queues   (user '$(AVIARY_ADMIN_USER)', password '$(AVIARY_ADMIN_PASSWORD)')"; \
	echo "  OAuth 2.0     $$url/i/oauth2/authorize   (consent pages: log in as username/password above; docs/oauth.md)"; \
	echo "  console       $$url/console   (apps, tokens, jobs, webhooks: log in as username/password above; docs/console.md)"; \
	echo; \
	echo "== Try it: create a compliance job =="; \
	if [ -z "$$bearer" ]; then echo "  (could not read bearer_token from $$f)"; fi; \
	echo "  curl -s -X POST $$url/2/compliance/jobs -H \"Authorization: Bearer $$bearer\" -H 'Content-Type: application/json' -d '{\"type\":\"tweets\",\"name\":\"demo\"}'"; \
	echo; \
	echo "== Try it: a filtered stream (add a rule, hold the stream; posts matching it arrive as they are made) =="; \
	echo "  curl -s -X POST $$url/2/tweets/search/stream/rules -H \"Authorization: Bearer $$bearer\" -H 'Content-Type: application/json' -d '{\"add\":[{\"value\":\"hello\",\"tag\":\"demo\"}]}'"; \
	echo "  curl -sN $$url/2/tweets/search/stream -H \"Authorization: Bearer $$bearer\""; \
	echo
	exec env $(RUN_ENV) $(AVIARY_BIN) dev

# The one test command: CI (.ci/run) and the README both use `make test`.
test: deps-test tools
	$(GO) vet ./...
	$(GO) test $(TEST_FLAGS) $(TEST_PKGS)

lint:
	@out="$$(find . -name '*.go' -not -path './.git/*' -not -path './vendor/*' \
		-not -path './var/*' -not -path './bin/*' -not -path '*/testdata/*' -print0 \
		| xargs -0 -r $(GOFMT) -l)"; \
	if [ -n "$$out" ]; then echo "gofmt: these files need formatting (run gofmt -w):"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench: deps tools
	$(BENCH_CMD)

# The load test (issue 32, docs/load.md) on a stack of its own: an isolated
# database, Redis database and blob directory, the binary built above.
load: deps build
	$(GO) run ./scripts/load -bin $(AVIARY_BIN) $(LOAD_FLAGS)

# The full fault matrix (docs/fault-matrix.md): 100 worker kills, 30 s cuts.
# The report (markdown tables) is printed and written to FAULTS_REPORT. The
# short version runs in `make test` (TestFaultMatrix without AVIARY_FAULTS).
FAULTS_REPORT ?= $(VAR_DIR)/fault-matrix.md
faults: deps tools
	@mkdir -p "$(dir $(FAULTS_REPORT))"
	AVIARY_FAULTS=full AVIARY_FAULTS_REPORT="$(abspath $(FAULTS_REPORT))" \
		$(GO) test -count=1 -v -timeout 90m -run '^TestFaultMatrix$$' ./internal/e2e/

# FUZZ_EXECS, FUZZ_TIME, FUZZ_RUN and FUZZ_PARALLEL are read by scripts/fuzz
# (docs/fuzzing.md); FuzzRequests needs PostgreSQL and Redis, as make test does.
fuzz: deps tools
	$(FUZZ_CMD)

docker-up:
	$(DOCKER_COMPOSE) up --build

clean:
	rm -rf "$(BIN_DIR)"

help:
	@sed -n '1,/^$$/p' $(firstword $(MAKEFILE_LIST)) | sed 's/^# \{0,1\}//'
