# Marquee. `make run` serves the demo on the embedded default; `make test` runs every test.
SHELL := /bin/bash
GO ?= go
export PATH := $(HOME)/go/bin:$(shell $(GO) env GOPATH 2>/dev/null)/bin:$(PATH)

# -trimpath: builds name files by module path, not by where the checkout
# is, so a fresh clone (CI's, a second worktree) reuses the Go build cache,
# go vet's and staticcheck's results instead of compiling and analysing
# everything again (about 250 CPU seconds of a `make test` on two cores).
export GOFLAGS := -trimpath $(GOFLAGS)

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/test?sslmode=disable
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
export TEST_DATABASE_URL TEST_REDIS_URL

.PHONY: run build assets deps lint test test-go test-types test-browser browser-tests services bench lighthouse clean

node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

deps: node_modules/.installed

assets: deps
	$(GO) run ./scripts/build

# The version and commit stamped into the binary (`marquee version`): the
# nearest tag and commit from git, or dev/unknown outside a checkout.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

build: assets
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/marquee .

run: build
	./bin/marquee migrate
	./bin/marquee seed-demo
	./bin/marquee serve

# Installs or starts PostgreSQL, Redis, MinIO, stripe-mock and Chromium when missing.
services:
	bash scripts/services.sh

# The Go tests and the browser tests run side by side: each mostly waits
# (databases, servers starting, pages loading), so together they finish in
# about the time of the longer one. The type check (about 15 s) runs beside
# them rather than before. Each target's output is printed whole when it
# ends.
test: build services
	$(MAKE) --no-print-directory -j3 --output-sync=target test-types test-go browser-tests

# staticcheck and deadcode, at pinned versions (go run builds them once into
# the Go cache). deadcode -test: a function no program or test reaches
# (scripts/deadcode.sh).
# Part of `make test` (test-go runs it after go vet, beside the tests).
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
DEADCODE := golang.org/x/tools/cmd/deadcode@v0.52.0
LINT_DEADCODE = GO=$(GO) bash scripts/deadcode.sh $(DEADCODE)
lint:
	$(GO) run $(STATICCHECK) ./...
	@$(LINT_DEADCODE)

test-types: deps
	npx tsc --noEmit -p .

# At most 30 PostgreSQL connections for the whole suite, so it passes on a
# server other programs share: two test processes (-p 2) of 14 each
# (TEST_PG_CONNS: the harness makes a test wait for its share), and the
# servers tests start keep small pools (DB_MAX_CONNS). Databases are named
# after TEST_DB_PREFIX (default mqtest) and the process. GOGC=400, as
# `marquee serve` runs: the test processes spent 10-15% of their CPU in the
# collector at the default; a larger heap is the price.
# go vet and lint run beside the tests, not before them (on a tree they
# have not seen, deadcode alone analyses the whole program, about 30 CPU
# seconds; scripts/deadcode.sh remembers a clean tree): their output is
# printed after the tests', and either failing fails test-go. (The lint
# target's commands, not $(MAKE) lint: a recipe naming $(MAKE) runs even
# under make -n.)
test-go:
	@lintlog=$$(mktemp); \
	( $(GO) vet ./... && $(GO) run $(STATICCHECK) ./... && { $(LINT_DEADCODE); } ) >$$lintlog 2>&1 & lintpid=$$!; \
	TEST_PG_CONNS=14 DB_MAX_CONNS=3 GOGC=400 $(GO) test -count=1 -timeout 30m -p 2 -parallel 8 ./...; tests=$$?; \
	wait $$lintpid; lint=$$?; \
	echo "go vet and lint:"; cat $$lintlog; rm -f $$lintlog; \
	if [ $$lint -ne 0 ]; then echo "go vet or lint failed"; fi; \
	[ $$tests -eq 0 ] && [ $$lint -eq 0 ]

test-browser: build
	$(MAKE) --no-print-directory browser-tests

# The longest files start first (Lighthouse on every public page, about
# three minutes, then the newsletter walk, which mostly waits for its
# scheduled post): started last, they ran alone at the end.
BROWSER_FIRST := scripts/browser/lighthouse.test.mjs scripts/browser/newsletter-walk.test.mjs
BROWSER_TESTS := $(BROWSER_FIRST) $(filter-out $(BROWSER_FIRST),$(sort $(wildcard scripts/browser/*.test.mjs)))

browser-tests:
	tmp=$$(mktemp -d) && BROWSER_SEED_TEMPLATE=$$tmp/demo node --test --test-concurrency=2 $(BROWSER_TESTS); status=$$?; rm -rf $$tmp; exit $$status

bench: build services
	bash scripts/bench

# Lighthouse (mobile preset) on every public page of the demo and the main
# member pages; JSON reports in lighthouse-reports/. LIGHTHOUSE_FLAGS="--runs 3"
# keeps each page's median performance run.
lighthouse: build
	node scripts/lighthouse/main.mjs $(LIGHTHOUSE_FLAGS)

clean:
	rm -rf bin public/build node_modules/.installed lighthouse-reports
