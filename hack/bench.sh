#!/usr/bin/env bash
# Benchmarks of the real binary against a seeded API server in its own
# process (longhorn-sim serve --seed-volumes: N volumes, ~N engines, 3N
# replicas, N VolumeAttachments, Longhorn 1.5.1), side by side in one run
# for each size in BENCH_SIZES (default "1000 10000"):
#
#   bare       paginated LISTs of volumes, engines, replicas, volumeattachments
#              and instancemanagers with curl, same page size, bodies not
#              decoded: one resource after the other, and all at once
#   kubectl    kubectl get volumes,engines,replicas -o json
#   scan       kubectl-longhorn_engines scan -o json (also at other page sizes)
#   fix-one    kubectl-longhorn_engines fix VOLUME --dry-run=client
#   guard      kubectl-longhorn_engines fix --watch --dry-run=client until every
#              volume is classified: peak RSS
#
# Times are the median of BENCH_RUNS runs (default 3; 1 for 10,000 volumes
# and more, which are heavy). Prints one table; docs/performance.md has one.
# BENCH_KUBECONFIG reuses a server already seeded with the one size in
# BENCH_SIZES (longhorn-sim serve --seed-volumes N --kubeconfig-out FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
sizes="${BENCH_SIZES:-1000 10000}"
page="${BENCH_PAGE:-500}"
kubectl="${KUBECTL:-/usr/bin/kubectl}"
tmp=$(mktemp -d)
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

echo "building..." >&2
go build -o "$tmp/longhorn-sim" ./hack/longhorn-sim
CGO_ENABLED=0 go build -trimpath -o "$tmp/plugin" ./cmd/kubectl-longhorn-engines # as make build
ns=longhorn-bench

now() { date +%s.%N; }
median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

# bare_list RESOURCE: paginated LIST with curl; prints the bytes read.
bare_list() {
  local res=$1 cont="" total=0 n url
  while :; do
    url="$server_url/apis/longhorn.io/v1beta2/namespaces/$ns/$res?limit=$page"
    [ -n "$cont" ] && url="$url&continue=$cont"
    # The API server pretty-prints for a curl user agent: look like a client.
    curl -sf -A bench --cacert "$tmp/ca.crt" -H "Authorization: Bearer $token" -H "Accept: application/json" -o "$tmp/page.$res" "$url"
    n=$(stat -c %s "$tmp/page.$res")
    total=$((total + n))
    cont=$(tail -c 4096 "$tmp/page.$res" | grep -o '"continue": *"[^"]*"' | tail -1 | sed 's/.*"\([^"]*\)"$/\1/' || true)
    [ -z "$cont" ] && break
  done
  echo "$total"
}
resources="volumes engines replicas volumeattachments instancemanagers"
bare_seq() { local t=0 r; for r in $resources; do t=$((t + $(bare_list "$r"))); done; echo "$t"; }
bare_par() {
  local r
  for r in $resources; do bare_list "$r" >"$tmp/bytes.$r" & done
  wait
  cat "$tmp"/bytes.* | awk '{ s += $1 } END { print s }'
}

# timed CMD...: seconds of wall time (output discarded).
timed() { local s; s=$(now); "$@" >/dev/null 2>&1 || true; echo "$(now) - $s" | bc; }
# rss CMD...: peak RSS in MB of the command.
rss() { /usr/bin/time -f '%M' -o "$tmp/rss" "$@" >/dev/null 2>&1 || true; echo "scale=0; $(tail -1 "$tmp/rss") / 1024" | bc; }
runs_of() { local n=$1; shift; local i; for ((i = 0; i < n; i++)); do "$@"; done | median; }

plugin() { "$tmp/plugin" --kubeconfig "$tmp/kubeconfig" -n "$ns" "$@"; }

# guard_rss: start the guard, wait until it has classified every volume
# (its start line, then the queue: one classification pass), stop it.
guard_rss() {
  /usr/bin/time -f '%M' -o "$tmp/guard.rss" "$tmp/plugin" --kubeconfig "$tmp/kubeconfig" -n "$ns" \
    fix --watch --dry-run=client --for 1h >/dev/null 2>"$tmp/guard.err" &
  local tpid=$! i
  for ((i = 0; i < 600; i++)); do
    grep -q ' watching ' "$tmp/guard.err" 2>/dev/null && break
    sleep 1
  done
  sleep "${BENCH_GUARD_SETTLE:-15}"
  pkill -INT -P "$tpid" || true
  wait "$tpid" 2>/dev/null || true
  echo "scale=0; $(tail -1 "$tmp/guard.rss") / 1024" | bc
}

rows=()
for volumes in $sizes; do
  runs=${BENCH_RUNS:-3}
  [ "$volumes" -ge 10000 ] && runs=${BENCH_RUNS:-1}
  if [ -n "${BENCH_KUBECONFIG:-}" ]; then
    cp "$BENCH_KUBECONFIG" "$tmp/kubeconfig"
  else
    rm -f "$tmp/ready" "$tmp/kubeconfig"
    "$tmp/longhorn-sim" serve --seed-volumes "$volumes" --kubeconfig-out "$tmp/kubeconfig" --ready-file "$tmp/ready" 2>"$tmp/server.log" &
    server=$!
    echo "seeding $volumes volumes in a separate API server process..." >&2
    until [ -f "$tmp/ready" ]; do
      kill -0 "$server" 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
      sleep 1
    done
    grep seeded "$tmp/server.log" >&2 || true
  fi
  server_url=$("$kubectl" --kubeconfig "$tmp/kubeconfig" config view --raw -o jsonpath='{.clusters[0].cluster.server}')
  "$kubectl" --kubeconfig "$tmp/kubeconfig" config view --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}' | base64 -d >"$tmp/ca.crt"
  token=$("$kubectl" --kubeconfig "$tmp/kubeconfig" config view --raw -o jsonpath='{.users[0].user.token}')
  stuck=pvc-00000 # every 100th volume has two active engines

  bytes=$(bare_seq)
  t_seq=$(runs_of "$runs" timed bare_seq)
  t_par=$(runs_of "$runs" timed bare_par)
  t_kubectl=$(runs_of "$runs" timed "$kubectl" --kubeconfig "$tmp/kubeconfig" -n "$ns" get volumes.longhorn.io,engines.longhorn.io,replicas.longhorn.io -o json)
  t_scan=$(runs_of "$runs" timed plugin scan -o json --chunk-size "$page")
  rss_scan=$(rss "$tmp/plugin" --kubeconfig "$tmp/kubeconfig" -n "$ns" scan -o json --chunk-size "$page")
  pages=""
  for p in ${BENCH_PAGES:-250 1000 2000}; do
    pages="$pages $p:$(runs_of "$runs" timed plugin scan -o json --chunk-size "$p")s"
  done
  t_fix=$(runs_of "$runs" timed plugin fix "$stuck" --dry-run=client)
  rss_guard=$(guard_rss)
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    server=""
  fi

  mb=$(echo "scale=0; $bytes / 1048576" | bc)
  rows+=("$(printf '| %s | %s MB | %.2f s / %.2f s | %.2f s | %.2f s (%.2fx seq, %.2fx par; %.2fx kubectl) | %s MB (%.1fx JSON) | %.2f s (%.3fx scan) | %s MB |' \
    "$volumes" "$mb" "$t_seq" "$t_par" "$t_kubectl" "$t_scan" \
    "$(echo "$t_scan / $t_seq" | bc -l)" "$(echo "$t_scan / $t_par" | bc -l)" "$(echo "$t_scan / $t_kubectl" | bc -l)" \
    "$rss_scan" "$(echo "$rss_scan / $mb" | bc -l)" "$t_fix" "$(echo "$t_fix / $t_scan" | bc -l)" "$rss_guard")")
  echo "$volumes volumes: scan at other page sizes:$pages" >&2
  echo "${rows[-1]}" >&2
done

echo
echo "page size $page; machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GB", $2 / 1048576 }' /proc/meminfo), $(uname -sr)"
echo "| volumes | JSON | bare LISTs (seq / par) | kubectl get -o json | scan -o json | scan peak RSS | fix VOLUME --dry-run=client | guard peak RSS |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"

# The explorer (internal/explore): generated states per second judged by
# Longhorn's own controllers, checks a, b and c, on the oldest real release.
if [ -z "${BENCH_SKIP_EXPLORE:-}" ]; then
  echo "explorer..." >&2
  rel=$(ls -d test/longhorn/v*/ | sed 's#test/longhorn/##; s#/##' | sort -V | head -1)
  line=$(EXPLORE_N="${BENCH_EXPLORE_N:-192}" EXPLORE_RELEASE="$rel" go test -count=1 -timeout 30m -run '^TestExplore$' -v ./internal/explore 2>&1 |
    grep -o 'Longhorn v[0-9.]*: [0-9]* states.*' | tail -1 || true)
  echo
  echo "explorer, Longhorn $rel: ${line:-no result}"
fi
