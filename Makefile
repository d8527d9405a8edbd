# engram — build, run and test. SQLite needs FTS5, which go-sqlite3 only
# compiles in with the sqlite_fts5 build tag, so every target passes it.
GO        ?= go
TAGS      := sqlite_fts5
BIN       := bin/engram
ADDR      ?= 127.0.0.1:8080
DATA      ?= ./data
PKGS      := ./...
BENCHTIME ?= 2s

.PHONY: build run test bench lint tidy-check clean

build:
	$(GO) build -tags $(TAGS) -o $(BIN) ./cmd/engram

# Serve on $(ADDR) with SQLite under $(DATA); prints the URL and where the
# default tenant's API key is.
run: build
	$(BIN) serve --addr $(ADDR) --data $(DATA)

# All tests with the race detector. The store and server suites also run
# on PostgreSQL when ENGRAM_TEST_POSTGRES_DSN is set (.ci/run sets it).
test:
	$(GO) test -tags $(TAGS) -race -count=1 $(PKGS)

bench:
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(TAGS) $(PKGS)

tidy-check:
	$(GO) mod tidy && git diff --exit-code go.mod go.sum

clean:
	rm -rf bin
