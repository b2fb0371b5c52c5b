#!/usr/bin/env bash
# Checks the krew manifest against the archives in dist/ (from
# `make release-check` or `make release-snapshot`), offline:
#   1. renders .krew.yaml as krew-release-bot would for the snapshot's tag,
#      with the sha256 of each archive built (a placeholder for the others);
#   2. the review rules krew's validator leaves out: short description of at
#      most 50 characters, description and caveats within 80 columns;
#   3. krew's own validate-krew-manifest (structure, platforms, selectors);
#   4. a custom index as docs/install.md describes (a git repository with
#      plugins/longhorn-engines.yaml), added with `kubectl krew index add`
#      and read back with `kubectl krew info`;
#   5. for each archive built: `kubectl krew install --manifest --archive`
#      into a temporary KREW_ROOT as that platform, LICENSE and the completion
#      shim installed; on this machine's platform also `kubectl longhorn-engines
#      version` and, after the copy step the caveats give, tab completion
#      through kubectl; then `kubectl krew uninstall`.
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
# A local custom index, as a user adds ours (cloned by krew, offline here).
index=$(mktemp -d)
trap 'rm -rf "$index"' EXIT
mkdir "$index/plugins"
cp "$manifest" "$index/plugins/longhorn-engines.yaml"
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
	echo "--- krew index add + kubectl krew install --manifest --archive ($os/$arch)"
	root=$(mktemp -d)
	log=$root.log
	if ! { krew "$root" "$os" "$arch" index add longhorn-engines "$index" &&
		krew "$root" "$os" "$arch" info longhorn-engines/longhorn-engines | grep -x "VERSION: $tag" >/dev/null &&
		krew "$root" "$os" "$arch" install --manifest="$manifest" --archive="$archive"; } >"$log" 2>&1; then
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
