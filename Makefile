# engram — build, run and test. SQLite needs FTS5, which go-sqlite3 only
# compiles in with the sqlite_fts5 build tag, so every target passes it.
GO        ?= go
TAGS      := sqlite_fts5
BIN       := bin/engram
ADDR      ?= 127.0.0.1:8080
DATA      ?= ./data
PKGS      := ./...
BENCHTIME ?= 2s

.PHONY: build run test bench lint tidy-check clean dist

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

# Release binaries for linux/amd64 and linux/arm64 under dist/, with
# SHA256SUMS. Static: SQLite and the C library are linked in (netgo and
# osusergo keep glibc's NSS out, sqlite_omit_load_extension its dlopen),
# so a binary runs on any Linux of its
# architecture, in a scratch or distroless image too. -buildvcs=auto
# stamps the VCS revision and time that engram version prints (a build
# outside a git checkout has none). arm64 needs a C cross compiler: on
# Debian, apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross.
DIST       := dist
DIST_TAGS  := sqlite_fts5,netgo,osusergo,sqlite_omit_load_extension
DIST_FLAGS := -trimpath -buildvcs=auto -tags $(DIST_TAGS) -ldflags '-s -w -linkmode external -extldflags "-static"'
CC_amd64   ?= gcc
CC_arm64   ?= aarch64-linux-gnu-gcc

dist:
	@command -v $(CC_arm64) >/dev/null || { echo "dist: $(CC_arm64) not found; on Debian: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross (or make dist CC_arm64=...)"; exit 1; }
	rm -rf $(DIST) && mkdir -p $(DIST)
	for arch in amd64 arm64; do \
	  cc=$(CC_amd64); [ $$arch = arm64 ] && cc=$(CC_arm64); \
	  CGO_ENABLED=1 GOOS=linux GOARCH=$$arch CC=$$cc $(GO) build $(DIST_FLAGS) -o $(DIST)/engram-linux-$$arch ./cmd/engram || exit 1; \
	done
	cd $(DIST) && sha256sum engram-linux-* > SHA256SUMS && cat SHA256SUMS

clean:
	rm -rf bin $(DIST)
