# harness — build, test, demo. Everything the tests need is installed from
# here (Go modules, and the pinned agent CLIs from npm into .agents/).
GO      ?= go
BIN     := bin/harness
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
FUZZTIME ?= 3s
JAEGER  ?= $(HOME)/.cache/harness/jaeger-v1.76.0-min

.PHONY: all build test unit fuzz vet lint lint-darwin install agents browser sandbox git-lfs podman base-image image jaeger demo view-demo bench bench-smoke bench-tools pgo clean

all: build

# Static (CGO_ENABLED=0: net and os/user have pure-Go versions): no dynamic
# loader at start-up, which is a millisecond of every run.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/harness

install:
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/harness

# The pinned agent CLIs (Claude Code, Codex, OpenCode, Gemini CLI), into
# .agents/ (gitignored). A re-run with the same pins does nothing.
agents:
	./scripts/agents.sh .agents

# Vetted as the suite is built (-race -pgo=off -tags jaeger): what vet
# compiles of each package's dependencies is then the test build's too.
# From empty caches, vet and the suite's build took 561 s of CPU on 2
# cores vetted the default way, 366 s so. process and mcpserver have
# files built only without the race detector: vetted without it too, as
# their NORACE tests are built.
vet:
	$(GO) vet -race -pgo=off -tags jaeger ./...
	$(GO) vet -pgo=off $(NORACE_PKGS)

# The README says the command builds for macOS: kept true here.
lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	GOOS=darwin $(GO) build -o /dev/null ./cmd/harness

# The whole module, tests included, type-checked for macOS: the suite
# does not run there, but it compiles. Not in lint: from a cold build
# cache it costs minutes (5.6 on 2 cores).
lint-darwin:
	GOOS=darwin $(GO) vet ./...

# Debian's Chromium, for the browser tests of 'harness serve' (headless,
# driven by chromedp). Installed only when missing, without its
# recommended packages (a desktop's: systemd, samba's libraries, printer
# set-up; in a container of the base image, 422 packages and 62 s instead
# of 299 and 40) but with the fonts they would bring.
browser:
	@command -v chromium >/dev/null || { apt-get update && apt-get install -y --no-install-recommends chromium fonts-liberation; }

# Debian's bubblewrap, for bench --isolate bwrap and its tests (the
# sandbox of Harbor tasks). Installed only when missing.
sandbox:
	@command -v bwrap >/dev/null || { apt-get update && apt-get install -y bubblewrap; }

# Debian's git-lfs, for bench's tests of a starting tree kept in git LFS.
# Installed only when missing.
git-lfs:
	@command -v git-lfs >/dev/null || { apt-get update && apt-get install -y git-lfs; }

# Podman (with runc) and mmdebstrap, for bench --isolate podman and its
# tests. Installed only when missing. podman runs with the settings of
# scripts/containers.conf (runc, cgroupfs, no default ulimits: what works
# on cgroup v1/hybrid hosts and in unprivileged containers).
export CONTAINERS_CONF ?= $(CURDIR)/scripts/containers.conf
podman:
	@command -v podman >/dev/null && command -v runc >/dev/null && command -v mmdebstrap >/dev/null || \
	  { apt-get update && apt-get install -y podman runc mmdebstrap; }

# The local base image of the fixture tasks (their Dockerfiles start FROM
# it) and of the bench image: no registry is needed, it is made from Debian
# packages. Built once per machine; a re-run finds it and does nothing.
# git (bench snapshots each run's tree with it) and ca-certificates (the
# agents' HTTPS) are for the bench image: one mmdebstrap serves both.
# Bump the tag when the packages change. Override BASE_IMAGE, BASE_SUITE or
# BASE_PACKAGES for another base.
BASE_IMAGE    ?= localhost/harness-base:bookworm-2
BASE_SUITE    ?= bookworm
BASE_PACKAGES ?= python3,python3-pytest,procps,git,ca-certificates
base-image: podman
	@podman image exists $(BASE_IMAGE) || { \
	  set -e; t=$$(mktemp -d); trap 'rm -rf "$$t"' EXIT; \
	  mmdebstrap --quiet --variant=apt --include=$(BASE_PACKAGES) $(BASE_SUITE) $$t/base.tar; \
	  podman import --quiet --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
	    --change 'CMD ["/bin/bash"]' $$t/base.tar $(BASE_IMAGE); }

# The image of the distributed bench (Containerfile, docs/bench.md): this
# harness (static) and SUITE (a directory, copied to the image's working
# directory /bench; none by default) on the agents image (Containerfile.agents:
# the base image, the pinned agents of .agents/ as 'make agents' installs
# them, copied: the build fetches nothing; built once per agents.lock and
# base). Tagged IMAGE, by default localhost/ + 'harness version --image'
# (harness-bench:VERSION-LOCK), the image 'bench k8s-job' names. podman's
# layer cache rebuilds only what changed (a new suite: its layer alone).
# Its base is base-image; IMAGE_BASE=… takes any glibc Debian/Ubuntu image
# with git.
IMAGE ?=
SUITE ?=
IMAGE_BASE ?= $(BASE_IMAGE)
image: build agents base-image
	@tag='$(IMAGE)'; [ -n "$$tag" ] || tag=localhost/$$(./$(BIN) version --image); \
	  BASE='$(IMAGE_BASE)' ./scripts/image.sh "$$tag" $(BIN) .agents $(SUITE) && echo "image: $$tag"

# Jaeger v2 (OTLP receiver and query API), the real backend of the OTLP
# export's tests: built once from the Go module proxy into a cache, with
# only the components they use (about 3 minutes and 70 MB on 2 cores); a
# cached binary is kept.
jaeger:
	GO=$(GO) ./scripts/jaeger.sh $(JAEGER)

# Every test: vet and gofmt, the race-checked unit and end-to-end suites
# (real agent CLIs against the scripted model, the live view in a headless
# browser), each real CLI's trace read back from Jaeger, and a short fuzz
# of every parser. Jaeger builds, and lint checks, while the agents
# download from npm and, at the same time, the Debian packages install
# and the base image is made (apt installs, which must not run two at
# once, one after the other in that one job): lint and the builds are
# work for the cores, downloads and mmdebstrap mostly wait. One after the
# other, the agents, the packages and the base image took 7 minutes of a
# fresh machine's 12 of set-up.
test:
	@$(MAKE) --no-print-directory jaeger >/tmp/harness-jaeger-build.log 2>&1 & jaeger=$$!; \
	lintlog=$$(mktemp); $(MAKE) --no-print-directory lint >$$lintlog 2>&1 & lint=$$!; \
	debslog=$$(mktemp); $(MAKE) --no-print-directory browser sandbox git-lfs base-image >$$debslog 2>&1 & debs=$$!; \
	$(MAKE) --no-print-directory -j2 agents build; status=$$?; \
	wait $$debs || status=$$?; cat $$debslog; rm -f $$debslog; \
	[ $$status -ne 0 ] || $(MAKE) --no-print-directory image || status=$$?; \
	wait $$lint || status=$$?; cat $$lintlog; rm -f $$lintlog; \
	wait $$jaeger || { cat /tmp/harness-jaeger-build.log; exit 1; }; exit $$status
	# The longest packages first (go test starts them in the order named):
	# e2e alone takes ~10 of the 2 cores' minutes, and started last it ran
	# by itself at the end. -pgo=off: the profile (make pgo) changes no
	# behaviour, and with it the command's test binary would compile every
	# package it imports a second time; the binaries the tests build and
	# run are built as users build them, with it.
	#
	# The suite has a temporary directory of its own ($$TMPDIR), removed
	# when it passes and kept (named) when it fails: the real CLIs leave
	# files in theirs (Claude Code's claude-0/ and cc-socks/, Gemini's
	# shell scripts and error reports, Codex's daemon directory), as do
	# the headless browser's profiles. A short name: tests put sockets
	# under it, and a socket's path must fit in 108 bytes.
	@tmp=$$(mktemp -d -t hx.XXXXXX) || exit 1; \
	if TMPDIR=$$tmp HARNESS_AGENTS_DIR=$(CURDIR)/.agents HARNESS_JAEGER=$(JAEGER) $(GO) test -race -pgo=off -count=1 -tags jaeger -timeout 30m ./e2e ./cmd/harness ./bench ./... && \
	   TMPDIR=$$tmp $(GO) test -pgo=off -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS); \
	then chmod -R u+w "$$tmp"; rm -rf "$$tmp"; \
	else echo "the suite's temporary files are kept in $$tmp"; exit 1; fi
	$(MAKE) fuzz

unit: git-lfs
	$(GO) test -race -pgo=off -count=1 ./...
	$(GO) test -pgo=off -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS)

# Tests that also run without the race detector: the floods, whose RSS
# bound the detector's shadow memory would break, and what takes it too
# long (a 1 GiB flood; a 96 MiB MCP request, over 30 s). Those built only
# without it say so (//go:build !race).
NORACE_TESTS = ^(TestStdoutFlood|TestStderrFlood|TestHugeLine|TestStdioEscapedPrompt)$$
NORACE_PKGS = ./process ./mcpserver

# A short fuzz of every fuzz target (scripts/fuzz.sh: one instrumented
# test binary a package, each target FUZZTIME).
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

# The newcomer's first command: build, install the pinned CLIs, and run a real
# agent against the built-in scripted model (no API key, no network).
demo: build agents
	HARNESS_AGENTS_DIR=$(CURDIR)/.agents ./$(BIN) run --no-log --agent claude --mock tool -f text -p "Create out.txt with the shell, then report." --cwd $$(mktemp -d)
	HARNESS_AGENTS_DIR=$(CURDIR)/.agents ./$(BIN) run --no-log --agent codex --mock tool -p "Create out.txt with the shell, then report." --cwd $$(mktemp -d)

# The live view of a demo run: a real Claude Code run against the scripted
# model, logged, then 'harness serve' on http://127.0.0.1:7777 (Ctrl-C ends it).
view-demo: build agents
	HARNESS_AGENTS_DIR=$(CURDIR)/.agents ./$(BIN) run --agent claude --mock edit -p "Create out.txt, then report." --cwd $$(mktemp -d) >/dev/null
	@echo "open http://127.0.0.1:7777/runs/latest"
	HARNESS_AGENTS_DIR=$(CURDIR)/.agents ./$(BIN) serve

# The figures of BENCHMARKS.md side by side on this machine: harness parse
# vs jq and cat, added latency, wrap overhead, memory, kill latency,
# start-up, --otlp on the real agents against Jaeger, and the go
# benchmarks (about 10 minutes).
bench: bench-tools sandbox base-image agents jaeger
	HARNESS_JAEGER=$(JAEGER) $(GO) run ./internal/perf -o BENCHMARKS.md

# The same measurements on tiny inputs: proves they still work (CI runs it).
bench-smoke: bench-tools sandbox base-image agents jaeger
	HARNESS_JAEGER=$(JAEGER) $(GO) run ./internal/perf -smoke

# The profile every build of harness is optimized with (go build's
# -pgo=auto reads cmd/harness/default.pgo): the CPU profile of the parse
# and run benchmarks of the command, on this machine. Rebuilt by hand when
# the hot paths change much; a stale profile still builds, and helps less.
pgo:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(GO) test -run '^$$' -bench 'ParseCommand|RunCommand' -benchtime 3s -cpuprofile "$$tmp/cpu.prof" -o "$$tmp/harness.test" ./cmd/harness && \
	$(GO) tool pprof -proto "$$tmp/cpu.prof" > cmd/harness/default.pgo

bench-tools:
	@command -v jq >/dev/null && command -v hyperfine >/dev/null || { apt-get update && apt-get install -y jq hyperfine; }

clean:
	rm -rf bin
