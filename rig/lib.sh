# shellcheck shell=bash
# Common helpers for the rig scripts. Source it; do not run it.
set -euo pipefail

RIG_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RIG_CACHE=${RIG_CACHE:-/var/cache/trbe-rig}
BUILD=${BUILD:-$RIG_TOP/build}
OUT=${OUT:-$RIG_TOP/out}
TREE=$BUILD/linux
export RIG_TOP RIG_CACHE BUILD OUT TREE

# ccache lives outside the checkout; BASEDIR makes hits work across clones.
export CCACHE_DIR=${CCACHE_DIR:-$RIG_CACHE/ccache}
export CCACHE_BASEDIR=$RIG_TOP
export CCACHE_NOHASHDIR=1
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-time_macros,include_file_mtime,include_file_ctime}

die() {
	echo "rig: error: $*" >&2
	exit 1
}

info() {
	echo "rig: $*" >&2
}

# stage NAME: print a header now and the wall time when the shell exits.
stage() {
	RIG_STAGE=$1
	RIG_STAGE_T0=$(date +%s)
	echo "==> [$RIG_STAGE] $(date -u +%H:%M:%S)" >&2
	trap stage_end EXIT
}

stage_end() {
	local rc=$? word="done"
	[ "$rc" -eq 0 ] || word="FAILED rc=$rc"
	echo "==> [$RIG_STAGE] $word in $(($(date +%s) - RIG_STAGE_T0))s" >&2
	exit "$rc"
}

# cpu_lock CMD...: run a CPU-heavy command under the machine-wide build lock
# (2 cores: never two kernel or perf builds at once). Re-entrant per process tree.
cpu_lock() {
	mkdir -p "$RIG_CACHE"
	if [ "${RIG_CPU_LOCK_HELD:-}" = 1 ]; then
		"$@"
	else
		RIG_CPU_LOCK_HELD=1 flock "$RIG_CACHE/cpu.lock" "$@"
	fi
}

# tree_lock shared|exclusive: hold build/.tree.lock until this shell exits.
# tree.sh switches build/linux under the exclusive lock; builds reading the
# tree hold it shared, so the tree never changes under a running build.
# Order: tree lock before the cpu lock, never the other way round.
tree_lock() {
	[ "${RIG_TREE_LOCK_HELD:-}" = 1 ] && return 0
	mkdir -p "$BUILD"
	exec {RIG_TREE_FD}>"$BUILD/.tree.lock"
	if [ "$1" = exclusive ]; then
		flock -x "$RIG_TREE_FD"
	else
		flock -s "$RIG_TREE_FD"
	fi
	export RIG_TREE_LOCK_HELD=1
}

arch_check() {
	case "$1" in
	x86_64|arm64) ;;
	*) die "ARCH must be x86_64 or arm64 (got '$1')" ;;
	esac
}

# Kernel make arguments per arch.
kmake_args() {
	local arch=$1
	case "$arch" in
	x86_64) echo "ARCH=x86_64" ;;
	arm64) echo "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" ;;
	esac
}

kcc() {
	case "$1" in
	x86_64) echo "ccache gcc" ;;
	arm64) echo "ccache aarch64-linux-gnu-gcc" ;;
	esac
}

kbuild_dir() {
	echo "$BUILD/kbuild-$1"
}

# A perf binary is a function of the tree it is built from, the toolchain,
# the libraries it links and the script that builds it: one built once is
# kept in $RIG_CACHE/bin/NAME/KEY and taken from there by the next build of
# the same tree (a fresh clone's make check: the build/linux tree is the same
# whatever the commit ids). RIG_BIN_CACHE=0 always builds.
# bin_key SRC WORD...: the key of SRC's HEAD tree, the WORDs (build flags,
# package versions) and the calling script; empty (no caching) when SRC has
# changes git does not hold in HEAD.
bin_key() {
	local src=$1 t
	shift
	[ "${RIG_BIN_CACHE:-1}" != 0 ] || return 0
	t=$(git -C "$src" rev-parse -q --verify 'HEAD^{tree}' 2>/dev/null) || return 0
	[ -z "$(git -C "$src" status --porcelain --untracked-files=all 2>/dev/null)" ] || return 0
	{ echo "$t"; printf '%s\n' "$@"; sha256sum <"$0"; } | sha256sum | cut -c1-16
}

# bin_get NAME KEY DEST: copy the cached binary to DEST (status 0 on a hit).
# Its mtime is left at the epoch, so that a make in DEST's O dir after a
# miss always links again instead of taking it as newer than its objects.
bin_get() {
	local f=$RIG_CACHE/bin/$1/$2/bin
	[ -n "$2" ] && [ -x "$f" ] || return 1
	mkdir -p "$(dirname "$3")"
	cp "$f" "$3.tmp" && touch -d @0 "$3.tmp" && mv "$3.tmp" "$3"
	touch "$RIG_CACHE/bin/$1/$2"
	info "$1 from the cache: $f (RIG_BIN_CACHE=0 builds it)"
}

# bin_put NAME KEY FILE: store FILE, keep the newest 24 binaries of NAME
# (make upstream-check builds one perf per patch).
bin_put() {
	local d=$RIG_CACHE/bin/$1 tmp
	[ -n "$2" ] || return 0
	mkdir -p "$d/$2"
	# A temporary name of its own: two builds of one tree may store at once.
	tmp=$(mktemp "$d/$2/bin.XXXXXX") &&
		{ cp "$3" "$tmp" && chmod 755 "$tmp" && mv -f "$tmp" "$d/$2/bin" || rm -f "$tmp"; }
	# shellcheck disable=SC2012 # names are hex keys
	ls -1t "$d" | tail -n +25 | while read -r old; do rm -rf "${d:?}/$old"; done
}

# The compiler and the -dev packages a host perf's features come from.
perf_libs() {
	gcc --version | head -1
	dpkg-query -W -f '${Package} ${Version}\n' '*-dev' 2>/dev/null
}

# Private apt configuration: papt_opts NAME prints apt options that use
# $RIG_CACHE/apt/NAME/{sources.list,lists,cache,status}; /etc/apt is never used
# for sources.
# perf_pair NAME NOBUILD: build the base and the series perf (unless
# NOBUILD is 1) and require both binaries; NAME prefixes the error.
perf_pair() {
	local p
	if [ "${2:-0}" != 1 ]; then
		make -C "$RIG_TOP" --no-print-directory perf BASE=1
		make -C "$RIG_TOP" --no-print-directory perf
	fi
	for p in "$BUILD/perf-base/perf" "$BUILD/perf/perf"; do
		[ -x "$p" ] || die "$1: $p not built; run 'make perf BASE=1' and 'make perf'"
	done
}

papt_opts() {
	local d=$RIG_CACHE/apt/$1
	echo "-o Dir::Etc::SourceList=$d/sources.list -o Dir::Etc::SourceParts=/dev/null" \
		"-o Dir::State::Lists=$d/lists -o Dir::Cache=$d/cache" \
		"-o Dir::State::Status=$d/status -o Debug::NoLocking=1" \
		"-o APT::Sandbox::User=root"
}

# papt_setup NAME ARCH LINE...: write the private sources list and update it
# when it changed or is older than a day.
papt_setup() {
	local name=$1 arch=$2 d
	shift 2
	d=$RIG_CACHE/apt/$name
	mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
	touch "$d/status"
	printf '%s\n' "$@" >"$d/sources.list.new"
	if ! cmp -s "$d/sources.list.new" "$d/sources.list" ||
	   [ -z "$(find "$d/lists" -maxdepth 1 -name '*Packages*' -o -maxdepth 1 -name '*Sources*' -mtime -1 2>/dev/null | head -1)" ]; then
		mv "$d/sources.list.new" "$d/sources.list"
		# shellcheck disable=SC2046
		apt-get $(papt_opts "$name") -o APT::Architectures::="$arch" -q update >"$d/update.log" 2>&1 ||
			{ cat "$d/update.log" >&2; die "private apt update ($name) failed: check the network and $d/sources.list"; }
	else
		rm -f "$d/sources.list.new"
	fi
}
