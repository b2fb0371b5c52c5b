#!/usr/bin/env bash
# Benchmarks: scan of 10,000 volumes / 20,000 engines / 30,000 replicas,
# side by side with the bare paginated LISTs of the same resources through
# the same client, in one run. The API server runs in its own process
# (longhorn-sim serve --seed-volumes), so its heap and GC stay out of the
# client's figures. Prints the time ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
volumes="${BENCH_VOLUMES:-10000}"
tmp=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

go build -o "$tmp/longhorn-sim" ./hack/longhorn-sim
"$tmp/longhorn-sim" serve --seed-volumes "$volumes" --kubeconfig-out "$tmp/kubeconfig" --ready-file "$tmp/ready" 2>"$tmp/server.log" &
server=$!
echo "seeding $volumes volumes in a separate API server process..." >&2
until [ -f "$tmp/ready" ]; do
  kill -0 "$server" 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
  sleep 1
done
grep seeded "$tmp/server.log" >&2 || true

out=$(LONGHORN_BENCH_KUBECONFIG="$tmp/kubeconfig" go test -run '^$' -bench 'BenchmarkScan' \
  -benchtime "${BENCH_TIME:-3x}" -count "${BENCH_COUNT:-3}" -timeout 30m ./pkg/scan/ | tee /dev/stderr)
awk '
  /BenchmarkScan\/bare-lists/ { bare += $3; nb++ }
  /BenchmarkScan\/scan/       { scan += $3; ns++ }
  END { if (nb && ns) printf "\nscan / bare LISTs = %.2fx (mean of %d runs each; goal <= 1.30x)\n", (scan/ns)/(bare/nb), ns }
' <<<"$out"
