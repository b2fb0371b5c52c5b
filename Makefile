# kubectl longhorn-engines — developer entry points.
BIN      := bin/kubectl-longhorn_engines
GO       ?= go
PKGS     := ./...
# Tests embed a real API server and run Longhorn's controllers (internal/realtest
# grew past 20 minutes warm this round): give the suite room on 2 cores.
TEST_TIMEOUT ?= 40m

.PHONY: all build demo sim test kube-apiserver test-short bench explore vet fmt-check lint docs docs-check tidy-check fuzz clean \
	test-releases soak kube-apiserver-soak tools lint-tool alerts-test release-test release-check release-snapshot krew-check krew-index image image-check

all: build

# The completion shim goes beside the plugin, where kubectl looks for it.
# CGO_ENABLED=0 and -trimpath are .goreleaser.yaml's env and flags (the
# tests build the plugin with them too, testenv.BuildPlugin): one compile
# that the tests and the release snapshot reuse from the build cache.
RELEASE_ENV   := CGO_ENABLED=0
RELEASE_FLAGS := -trimpath
build:
	$(RELEASE_ENV) $(GO) build $(RELEASE_FLAGS) -o $(BIN) ./cmd/kubectl-longhorn-engines
	install -m 0755 hack/kubectl_complete-longhorn_engines $(dir $(BIN))

# Start the simulated cluster with every scenario, run the real binary's
# scan and a dry-run fix against it, and stop.
demo: build
	$(GO) run ./hack/longhorn-sim demo --plugin $(BIN)

# Serve the simulated cluster until Ctrl-C, for trying commands by hand.
sim:
	$(GO) run ./hack/longhorn-sim serve

# Kubernetes' own kube-apiserver for the tests that need core/v1, storage,
# batch and real RBAC (internal/kubeserver); its own module, test/kubeapiserver.
# -race -ldflags=-w: kubeserver.BuildFlags (why is there).
kube-apiserver:
	$(GO) build -C test/kubeapiserver -race -ldflags=-w -o $(CURDIR)/bin/kube-apiserver-test .

# The server is built first, on its own: built inside a test binary's
# TestMain it would count against that package's timeout.
# -ldflags=-w: no DWARF in the test binaries (stack traces and race reports
# come from the symbol table): linking each of them costs a third less.
test: kube-apiserver
	$(GO) test -race -ldflags=-w -timeout $(TEST_TIMEOUT) $(PKGS)
	$(GO) test -C test/longhorn/control -race -ldflags=-w .

# Every Longhorn release with a module under test/longhorn (make test runs
# lhreal.Sample only): each release's controllers build on their own k8s.io
# versions, about 4 CPU-minutes each cold (docs/testing.md).
RELEASES_TIMEOUT ?= 90m
# Each test binary records what it proved per release in test/matrix/
# (internal/testenv/matrix.go): realtest on Longhorn's own controllers and
# lhsim, and fix's repairs on lhsim (the releases that cannot be run);
# make docs renders docs/support-matrix.md's table from that record.
MATRIX_ENV := LHE_MATRIX_DIR=$(CURDIR)/test/matrix
FIX_SIM_REPAIRS := ^(TestFixRepairsTheSeedBug|TestMigrationRequestRacingTheRepair|TestOldOrderMigrationRequestWipes|TestFixRepairsTheHandDeletedEngine|TestFixSetsFlagsBeforePendingCleanupEnds)$$
test-releases:
	LHREAL_RELEASES=all $(MATRIX_ENV) \
		$(GO) test -race -timeout $(RELEASES_TIMEOUT) ./internal/lhreal ./internal/realtest
	$(MATRIX_ENV) $(GO) test -race -timeout $(RELEASES_TIMEOUT) -run '$(FIX_SIM_REPAIRS)' ./pkg/fix

# The soak's server, without -race: the race detector in kube-apiserver
# made it most of a soak's CPU (a whole compile of its own, once).
kube-apiserver-soak:
	$(GO) build -C test/kubeapiserver -ldflags=-w -o $(CURDIR)/bin/kube-apiserver-soak .

# The soak (docs/soak.md, written by the run): MIGRATIONS live migrations per
# release under injected faults with the guard running, every invariant
# checked along the way (make test runs 8 a release). SOAK_RELEASES= a comma
# list (default: make test's sample); SETTLE= the guard's --settle;
# SOAK_REPORT= where the report goes. Every release at once (-parallel 8):
# a soak waits on --settle more than it computes.
MIGRATIONS    ?= 100
SOAK_VOLUMES  ?= 4
SOAK_SEED     ?= 1
SETTLE        ?= 10s
SOAK_RELEASES ?=
SOAK_REPORT   ?= docs/soak.md
soak: kube-apiserver-soak
	KUBESERVER_BINARY=$(CURDIR)/bin/kube-apiserver-soak LHREAL_RELEASES=$(SOAK_RELEASES) SOAK_MIGRATIONS=$(MIGRATIONS) SOAK_VOLUMES=$(SOAK_VOLUMES) SOAK_SEED=$(SOAK_SEED) \
		SOAK_SETTLE=$(SETTLE) SOAK_REPORT=$(abspath $(SOAK_REPORT)) \
		SOAK_COMMAND="make soak MIGRATIONS=$(MIGRATIONS) SOAK_VOLUMES=$(SOAK_VOLUMES) SOAK_SEED=$(SOAK_SEED) SETTLE=$(SETTLE) SOAK_RELEASES=$(SOAK_RELEASES)$(if $(filter-out docs/soak.md,$(SOAK_REPORT)), SOAK_REPORT=$(SOAK_REPORT))" \
		$(GO) test -timeout 0 -parallel 8 -run '^TestSoak$$' -v ./internal/realtest

test-short:
	$(GO) test -short $(PKGS)

bench:
	./hack/bench.sh

# The explorer's long run (docs/testing.md, "The explorer"): N generated
# states per release from SEED, judged by Longhorn's own controllers; new
# disagreements are shrunk and saved in internal/explore/testdata; then every
# fixture is replayed, those of testdata/long too (make test leaves them out).
# RELEASE= one release (default: every release with real controllers).
SEED    ?= 27
N       ?= 500
RELEASE ?=
# BATCH states share one namespace and one run of the controllers;
# PARALLEL batches run at once (a batch mostly waits for Longhorn).
BATCH    ?= 96
PARALLEL ?= 2
# FIRST= the state to resume a stopped run at (states FIRST…N-1).
FIRST    ?= 0
explore:
	EXPLORE_SEED=$(SEED) EXPLORE_N=$(N) EXPLORE_FIRST=$(FIRST) EXPLORE_RELEASE=$(RELEASE) EXPLORE_BATCH=$(BATCH) EXPLORE_PARALLEL=$(PARALLEL) \
		EXPLORE_SHRINK=1 EXPLORE_LONG=1 \
		nice $(GO) test -timeout 0 -run '^(TestExplore|TestFixtures)$$' -v ./internal/explore

# -race: vet compiles every dependency for its export data, and with the
# tests' build flags that compile is the one `make test` reuses (without it,
# a cold CI compiled the API server and etcd twice).
vet:
	$(GO) vet -race $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Bounded fuzzing of the bundle, file and log parsers, and of what scan,
# describe and preflight print of them (not in CI: see .ci/run).
# -fuzzminimizetime keeps a crash's minimisation from eating the budget.
# A fuzz build instruments every package it links: -tags fuzz leaves out
# readstate's test files that start an API server (//go:build !fuzz), which
# took the cold instrumented build from about 20 minutes to 5.
FUZZTIME ?= 20s
FUZZ     := $(GO) test -tags fuzz -run='^$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=20x
fuzz:
	$(FUZZ) -fuzz=FuzzFilesParse  ./pkg/readstate
	$(FUZZ) -fuzz=FuzzBundleParse ./pkg/readstate
	$(FUZZ) -fuzz=FuzzLogLine     ./pkg/readstate
	$(FUZZ) -fuzz=FuzzCommandsEscape ./pkg/cmd

# --- Release and ecosystem -------------------------------------------------
# Pinned tools build from the Go module proxy into bin/tools, from their own
# modules (hack/tools, hack/tools/krew, hack/image) so the project's go.mod stays clean.
TOOLS_DIR     := bin/tools
GORELEASER    := $(TOOLS_DIR)/goreleaser
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint
KREW          := $(TOOLS_DIR)/kubectl-krew
VALIDATE_KREW := $(TOOLS_DIR)/validate-krew-manifest
IMAGE_TOOL    := $(TOOLS_DIR)/image
PROMTOOL      := $(TOOLS_DIR)/promtool

tools: $(GORELEASER) $(GOLANGCI_LINT) $(KREW) $(VALIDATE_KREW) $(IMAGE_TOOL) $(PROMTOOL)

# The one tool CI builds (.ci/run): golangci-lint. The others serve
# release-test, which CI does not run.
lint-tool: $(GOLANGCI_LINT)

# What a release ships, checked without publishing: the alert rules through
# promtool, the goreleaser snapshot, the krew install from a local index and
# the image. Not in CI (.ci/run says why): run it before tagging a release
# and after changing deploy/, .goreleaser.yaml, .krew.yaml, krew-index/ or
# hack/image.
release-test: alerts-test release-check krew-check image-check

$(GORELEASER): hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && $(GO) build -o $(CURDIR)/$@ github.com/goreleaser/goreleaser/v2

# Prometheus' rule checker and rule-test runner, for make alerts-test.
# remove_all_sd leaves out Prometheus' service-discovery plugins (every
# cloud provider's SDK): rules need none, and they were most of its cold build.
$(PROMTOOL): hack/tools/promtool/go.mod hack/tools/promtool/go.sum
	cd hack/tools/promtool && $(GO) build -tags remove_all_sd -o $(CURDIR)/$@ github.com/prometheus/prometheus/cmd/promtool

# deploy/guard-alerts.yaml through promtool: its rule parser and the rule
# unit tests of test/alerts (docs/observability.md).
alerts-test: $(PROMTOOL)
	PROMTOOL=$(CURDIR)/$(PROMTOOL) $(GO) test -count=1 ./internal/alerttest/

# With make build's environment and flags: the standard library compiles
# once for both in a cold CI.
$(GOLANGCI_LINT): hack/tools/go.mod hack/tools/go.sum
	cd hack/tools && $(RELEASE_ENV) $(GO) build $(RELEASE_FLAGS) -o $(CURDIR)/$@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# Named kubectl-krew so that kubectl finds it on PATH as `kubectl krew`.
$(KREW): hack/tools/krew/go.mod hack/tools/krew/go.sum
	cd hack/tools/krew && $(GO) build -o $(CURDIR)/$@ sigs.k8s.io/krew/cmd/krew

$(VALIDATE_KREW): hack/tools/krew/go.mod hack/tools/krew/go.sum
	cd hack/tools/krew && $(GO) build -o $(CURDIR)/$@ sigs.k8s.io/krew/cmd/validate-krew-manifest

# GOFLAGS=-race: golangci-lint type-checks from the export data that
# go list compiles, and with the tests' flag that is make vet's and make
# test's compile (with default flags, a cold CI compiled everything again).
lint: $(GOLANGCI_LINT)
	GOFLAGS=-race $(GOLANGCI_LINT) run ./...

# docs/commands/*.md from the cobra tree; docs-check fails when they drift.
# With make build's flags, so the plugin's packages come from its compile.
GENDOCS := $(RELEASE_ENV) $(GO) run $(RELEASE_FLAGS) ./hack/gendocs
docs:
	$(GENDOCS)
	$(GO) run ./hack/genmatrix

docs-check:
	$(GENDOCS) -check
	$(GO) run ./hack/genmatrix -check

# go mod tidy must leave every module of the repository unchanged.
tidy-check:
	$(GO) mod tidy -diff
	cd hack/tools && $(GO) mod tidy -diff
	cd hack/tools/krew && $(GO) mod tidy -diff
	cd hack/tools/promtool && $(GO) mod tidy -diff
	cd hack/image && $(GO) mod tidy -diff
	cd test/kubeapiserver && $(GO) mod tidy -diff

# goreleaser check + a snapshot archive of this machine's target in dist/.
release-check: $(GORELEASER)
	GORELEASER=$(GORELEASER) ./hack/release-check.sh

# Every archive of a release in dist/, nothing published.
release-snapshot: $(GORELEASER)
	$(GORELEASER) release --snapshot --clean

# The krew manifest rendered for the archives in dist/, validated and
# installed with krew into a temporary KREW_ROOT.
krew-check: $(KREW) $(VALIDATE_KREW)
	TOOLS=$(TOOLS_DIR) ./hack/krew-check.sh

# The custom index's manifest for release TAG, from every archive in dist/
# (krew-index/README.md).
krew-index:
	@[ -n "$(TAG)" ] || { echo "error: make krew-index TAG=vX.Y.Z" >&2; exit 1; }
	$(GO) run ./hack/krew-manifest -tag $(TAG) -dist dist -o krew-index/plugins/longhorn-engines.yaml

# The container image (hack/image, its own module): an OCI image index with
# one image per platform from goreleaser's binaries in dist/, written to
# bin/image as an OCI layout; PUSH=ghcr.io/...:vX.Y.Z also pushes it.
# image-check builds this machine's platform from the snapshot of
# release-check and checks it.
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64

$(IMAGE_TOOL): hack/image/go.mod hack/image/go.sum $(wildcard hack/image/*.go)
	cd hack/image && $(GO) build -o $(CURDIR)/$@ .

image: $(IMAGE_TOOL)
	$(IMAGE_TOOL) build -dist dist -layout bin/image -platforms $(IMAGE_PLATFORMS) $(if $(PUSH),-push $(PUSH))

image-check: $(IMAGE_TOOL)
	$(IMAGE_TOOL) build -dist dist -layout bin/image -platforms linux/$$($(GO) env GOARCH)
	$(IMAGE_TOOL) verify -dist dist -layout bin/image -platforms linux/$$($(GO) env GOARCH)

clean:
	rm -rf bin dist
