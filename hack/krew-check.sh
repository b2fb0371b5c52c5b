#!/usr/bin/env bash
# Checks the krew manifest against the archives in dist/ (from
# `make release-check` or `make release-snapshot`), offline:
#   1. renders .krew.yaml as krew-release-bot would for the snapshot's tag,
#      with the sha256 of each archive built (a placeholder for the others);
#   2. the review rules krew's validator leaves out: short description of at
#      most 50 characters, description and caveats within 80 columns;
#   3. krew's own validate-krew-manifest (structure, platforms, selectors);
#   4. a custom index as docs/install.md describes: a git repository made
#      from krew-index/ (what the index repository holds) with the rendered
#      plugins/longhorn-engines.yaml, its archive URIs pointed from GitHub's
#      release download folder to dist/ served on 127.0.0.1 (krew downloads
#      over HTTP; nothing else in the manifest changes), added with
#      `kubectl krew index add` and read back with `kubectl krew info`;
#   5. for each archive built: `kubectl krew install longhorn-engines/longhorn-engines`
#      from that index into a temporary KREW_ROOT as that platform (krew
#      downloads the archive and checks its sha256), LICENSE and the
#      completion shim installed; on this machine's platform also `kubectl
#      longhorn-engines version` and, after the copy step the caveats give,
#      tab completion through kubectl; then `kubectl krew uninstall`.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS=${TOOLS:-bin/tools}
KUBECTL=${KUBECTL:-/usr/bin/kubectl}
[ -x "$TOOLS/kubectl-krew" ] || { echo "error: $TOOLS/kubectl-krew missing: make tools" >&2; exit 1; }
[ -f dist/metadata.json ] || { echo "error: dist/ has no snapshot: make release-check first" >&2; exit 1; }
tag=$(sed -n 's/.*"tag": *"\([^"]*\)".*/\1/p' dist/metadata.json)
[ -n "$tag" ] || { echo "error: no tag in dist/metadata.json" >&2; exit 1; }

manifest=bin/krew/longhorn-engines.yaml
echo "--- render .krew.yaml for $tag"
go run ./hack/krew-manifest -tag "$tag" -dist dist -allow-missing -o "$manifest"

echo "--- review rules"
short=$(sed -n 's/^  shortDescription: *//p' "$manifest")
if [ "${#short}" -gt 50 ]; then
	echo "error: shortDescription has ${#short} characters (at most 50): $short" >&2
	exit 1
fi
if awk '/^  (description|caveats): \|/{b=1; next} /^  [a-z]/{b=0} b && length($0) > 84 {print; bad=1} END{exit !bad}' "$manifest"; then
	echo "error: description or caveats lines above exceed 80 columns" >&2
	exit 1
fi

echo "--- validate-krew-manifest"
"$TOOLS/validate-krew-manifest" -manifest "$manifest" -skip-install

host_os=$(go env GOOS)
host_arch=$(go env GOARCH)
shopt -s nullglob
archives=(dist/kubectl-longhorn-engines_"${tag}"_*.tar.gz)
[ ${#archives[@]} -gt 0 ] || { echo "error: no archive for $tag in dist/" >&2; exit 1; }
# The release archives served as GitHub would serve them, on loopback.
go build -o bin/serve-dir ./hack/serve-dir
index=$(mktemp -d)
rm -f bin/krew/url
bin/serve-dir -dir dist -url-file bin/krew/url &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$index"' EXIT
for _ in $(seq 100); do [ -s bin/krew/url ] && break; sleep 0.1; done
[ -s bin/krew/url ] || { echo "error: the archive server did not start" >&2; exit 1; }
base=$(cat bin/krew/url)
release_url="https://github.com/longhorn-engines/kubectl-longhorn-engines/releases/download/$tag/"
# A local custom index, as a user adds ours (cloned by krew, offline here).
cp -R krew-index/. "$index/"
mkdir -p "$index/plugins"
sed "s|uri: $release_url|uri: $base|" "$manifest" >"$index/plugins/longhorn-engines.yaml"
if [ "$(grep -c "uri: $base" "$index/plugins/longhorn-engines.yaml")" != "$(grep -c 'uri: ' "$manifest")" ]; then
	echo "error: not every archive URI in $manifest starts with $release_url" >&2
	exit 1
fi
git -C "$index" init -q
git -C "$index" add plugins
git -C "$index" -c user.name=krew-check -c user.email=krew-check@localhost commit -qm "longhorn-engines $tag"

krew() { # krew ROOT OS ARCH ARGS...: run `kubectl krew` in a clean environment
	local root=$1 os=$2 arch=$3
	shift 3
	env -i HOME="$root" PATH="$TOOLS:/usr/bin:/bin" KREW_ROOT="$root" KREW_OS="$os" KREW_ARCH="$arch" \
		KREW_NO_UPGRADE_CHECK=1 "$KUBECTL" krew "$@" </dev/null
}

for archive in "${archives[@]}"; do
	platform=${archive##*/kubectl-longhorn-engines_"${tag}"_}
	platform=${platform%.tar.gz}
	os=${platform%_*}
	arch=${platform#*_}
	echo "--- kubectl krew index add + kubectl krew install longhorn-engines/longhorn-engines ($os/$arch)"
	root=$(mktemp -d)
	log=$root.log
	if ! { krew "$root" "$os" "$arch" index add longhorn-engines "$index" &&
		krew "$root" "$os" "$arch" info longhorn-engines/longhorn-engines | grep -x "VERSION: $tag" >/dev/null &&
		krew "$root" "$os" "$arch" install longhorn-engines/longhorn-engines; } >"$log" 2>&1; then
		cat "$log"
		echo "error: krew could not add the index or install $archive" >&2
		exit 1
	fi
	rm -f "$log"
	store=$root/store/longhorn-engines/$tag
	for f in LICENSE kubectl_complete-longhorn_engines; do
		[ -f "$store/$f" ] || { echo "error: $f not installed in $store" >&2; exit 1; }
	done
	if [ "$os/$arch" = "$host_os/$host_arch" ]; then
		path="$root/bin:$TOOLS:/usr/bin:/bin"
		out=$(env -i HOME="$root" PATH="$path" "$KUBECTL" longhorn-engines version)
		echo "$out"
		case "$out" in kubectl-longhorn_engines*) ;; *) echo "error: unexpected version output" >&2; exit 1 ;; esac
		# The caveats' completion step, then completion through kubectl.
		cp "$store/kubectl_complete-longhorn_engines" "$root/bin/"
		out=$(env -i HOME="$root" PATH="$path" "$KUBECTL" __complete longhorn-engines '' 2>/dev/null)
		for sub in scan fix migrate; do
			grep -q "^$sub" <<<"$out" || { echo "error: completion through kubectl lacks $sub:" >&2; echo "$out" >&2; exit 1; }
		done
		echo "completion through kubectl: OK"
		rm "$root/bin/kubectl_complete-longhorn_engines"
	fi
	krew "$root" "$os" "$arch" uninstall longhorn-engines >/dev/null 2>&1
	[ ! -e "$root/bin/kubectl-longhorn_engines" ] || { echo "error: uninstall left the plugin link" >&2; exit 1; }
	rm -rf "$root"
done
echo "krew-check: OK ($manifest)"
