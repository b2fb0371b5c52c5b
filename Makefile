# kubectl longhorn-engines — developer entry points.
BIN      := bin/kubectl-longhorn_engines
GO       ?= go
PKGS     := ./...
# Tests embed a real API server: give the suite room on 2 cores.
TEST_TIMEOUT ?= 25m

.PHONY: all build demo sim test test-short bench vet fmt-check lint docs docs-check tidy-check fuzz clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/kubectl-longhorn-engines

# Start the simulated cluster with every scenario, run the real binary's
# scan and a dry-run fix against it, and stop.
demo: build
	$(GO) run ./hack/longhorn-sim demo --plugin $(BIN)

# Serve the simulated cluster until Ctrl-C, for trying commands by hand.
sim:
	$(GO) run ./hack/longhorn-sim serve

test:
	$(GO) test -race -timeout $(TEST_TIMEOUT) $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

bench:
	./hack/bench.sh

vet:
	$(GO) vet $(PKGS)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Bounded fuzzing of the bundle, file and log parsers (CI runs this).
# -fuzzminimizetime keeps a crash's minimisation from eating the budget.
FUZZTIME ?= 20s
fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzFilesParse  -fuzztime=$(FUZZTIME) -fuzzminimizetime=20x ./pkg/inventory
	$(GO) test -run='^$$' -fuzz=FuzzBundleParse -fuzztime=$(FUZZTIME) -fuzzminimizetime=20x ./pkg/inventory
	$(GO) test -run='^$$' -fuzz=FuzzLogLine     -fuzztime=$(FUZZTIME) -fuzzminimizetime=20x ./pkg/inventory

clean:
	rm -rf bin dist
