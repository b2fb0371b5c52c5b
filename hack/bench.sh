#!/usr/bin/env bash
# Benchmarks: scan of 10,000 volumes / 20,000 engines / 30,000 replicas
# against the in-process API server, side by side with the bare paginated
# LISTs of the same resources through the same client. Prints the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${BENCH_COUNT:-3}"
out=$(go test -run '^$' -bench 'BenchmarkScan' -benchtime "${BENCH_TIME:-3x}" -count "$count" -timeout 30m ./pkg/scan/ | tee /dev/stderr)
awk '
  /BenchmarkScan\/bare-lists/ { bare += $3; nb++ }
  /BenchmarkScan\/scan/       { scan += $3; ns++ }
  END { if (nb && ns) printf "\nscan / bare LISTs = %.2fx (mean of %d runs each; goal <= 1.30x)\n", (scan/ns)/(bare/nb), ns }
' <<<"$out"
