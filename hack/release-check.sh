#!/usr/bin/env bash
# Checks the release configuration without publishing anything:
#   1. goreleaser check on .goreleaser.yaml;
#   2. a snapshot release of one target (this machine's, or TARGET=os/arch),
#      from .goreleaser.yaml with only its goos/goarch lists narrowed, so the
#      archive, its files and checksums.txt come from goreleaser's own pipes;
#   3. the archive holds the binary, LICENSE, README.md and the executable
#      completion shim, checksums.txt matches it, and the binary reports the
#      snapshot version and commit injected through ldflags.
# A full snapshot of every target is `make release-snapshot` (about five
# times the build time).
set -euo pipefail
cd "$(dirname "$0")/.."

GORELEASER=${GORELEASER:-bin/tools/goreleaser}
target=${TARGET:-$(go env GOOS)/$(go env GOARCH)}
os=${target%/*}
arch=${target#*/}

echo "--- goreleaser check"
"$GORELEASER" check

echo "--- snapshot release for $os/$arch"
cfg=bin/goreleaser-$os-$arch.yaml
mkdir -p bin
sed -e "s|^    goos: \[.*\]$|    goos: [$os]|" -e "s|^    goarch: \[.*\]$|    goarch: [$arch]|" .goreleaser.yaml >"$cfg"
if [ "$(grep -c -e "^    goos: \[$os\]$" -e "^    goarch: \[$arch\]$" "$cfg")" != 2 ]; then
	echo "error: could not narrow goos/goarch in .goreleaser.yaml (keep each list on one line)" >&2
	exit 1
fi
"$GORELEASER" release --snapshot --clean --config "$cfg"

echo "--- archive contents"
shopt -s nullglob
archives=(dist/kubectl-longhorn-engines_*_"${os}"_"${arch}".tar.gz)
if [ ${#archives[@]} != 1 ]; then
	echo "error: expected one archive for $os/$arch in dist/, found ${#archives[@]}" >&2
	exit 1
fi
archive=${archives[0]}
bin=kubectl-longhorn_engines
[ "$os" = windows ] && bin=$bin.exe
listing=$(tar -tvzf "$archive")
echo "$listing"
# The names are read whole first: `tar | grep -q` under pipefail fails
# whenever grep stops reading before tar has written everything (SIGPIPE).
names=$(tar -tzf "$archive")
for f in "$bin" LICENSE README.md kubectl_complete-longhorn_engines; do
	if ! grep -qx "$f" <<<"$names"; then
		echo "error: $archive lacks $f at its top level" >&2
		exit 1
	fi
done
for f in "$bin" kubectl_complete-longhorn_engines; do
	if ! echo "$listing" | grep -E "^-rwx.* $f$" >/dev/null; then
		echo "error: $f is not executable in $archive" >&2
		exit 1
	fi
done
(cd dist && grep " $(basename "$archive")$" checksums.txt | sha256sum -c -)

if [ "$target" = "$(go env GOOS)/$(go env GOARCH)" ]; then
	echo "--- version of the archived binary"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	tar -xzf "$archive" -C "$tmp"
	out=$("$tmp/$bin" version)
	echo "$out"
	version=$(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' dist/metadata.json)
	case "$out" in
	*" $version "*"by goreleaser)") ;;
	*)
		echo "error: version output does not carry goreleaser's version $version" >&2
		exit 1
		;;
	esac
fi
echo "release-check: OK ($archive)"
