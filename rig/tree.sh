#!/usr/bin/env bash
# make tree [BASE=1]: Debian's linux-source-7.3 -> build/linux, a git repository:
#   tag base        the pristine upstream source (first commit)
#   tag overlay     base + our new files (drivers/ kernel/ include/ tools/ Documentation/)
#   branch series   overlay + one commit per patch in patches/series (git am, fuzz 0)
#   branch partial-core    overlay + the series' perf/core patches (perf-core-*) only
#   branch partial-driver  overlay + the series' coresight patches (coresight-*) only
# BASE=1 checks out `overlay` (pristine code plus the new, unwired files),
# PARTIAL=core|driver a partial branch (the "core only" and "driver only"
# kernels of the emulated-TRBE A/B), else `series`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/series.sh"
stage "tree${BASE:+ BASE=$BASE}${PARTIAL:+ PARTIAL=$PARTIAL}"
tree_lock exclusive

# shellcheck source=/dev/null
. "$RIG_TOP/patches/UPSTREAM"
OVERLAY_DIRS=(arch drivers kernel include lib mm tools Documentation)
DEBS=$RIG_CACHE/debs
mkdir -p "$DEBS" "$BUILD"

# 1. The package: private apt configuration, apt-get download, sha256 check.
deb=$(ls "$DEBS/${PACKAGE}_"*_all.deb 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$deb" ] || [ "${REFRESH:-0}" = 1 ]; then
	papt_setup base amd64 "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $SUITE main"
	info "downloading $PACKAGE ($SUITE)"
	# shellcheck disable=SC2046
	(cd "$DEBS" && apt-get $(papt_opts base) -q download "$PACKAGE" >/dev/null) ||
		die "apt-get download $PACKAGE failed: check the network or MIRROR/SUITE in patches/UPSTREAM"
	deb=$(ls "$DEBS/${PACKAGE}_"*_all.deb | sort -V | tail -1)
fi
ver=$(dpkg-deb -f "$deb" Version)
sum=$(sha256sum "$deb" | cut -d' ' -f1)
NEWER=0
if [ "$ver" != "$VERSION" ]; then
	case "$ver" in
	7.3.*) NEWER=1 ;;
	*) die "$deb is version $ver, not $VERSION (patches/UPSTREAM); remove it from $DEBS" ;;
	esac
elif [ "$sum" != "$SHA256" ]; then
	die "$deb: sha256 $sum does not match patches/UPSTREAM ($SHA256); delete the file and rerun"
fi

# 2. A cached git repository of the pristine source, one per package version.
safever=${ver//\~/_}
baserepo=$RIG_CACHE/git/$PACKAGE-$safever.git
if [ ! -f "$baserepo/rig-done" ]; then
	info "unpacking $(basename "$deb") into $baserepo (about a minute)"
	rm -rf "$baserepo" "$baserepo.tmp"
	mkdir -p "$baserepo.tmp/src"
	dpkg-deb --fsys-tarfile "$deb" | tar -xO "./$TARBALL" | tar -xJ -C "$baserepo.tmp/src" --strip-components=1
	(
		cd "$baserepo.tmp/src" || exit 1
		git init -q -b pristine .
		git config gc.auto 0
		# Debian's top-level .gitignore ignores every top-level path: add with -f.
		git add -Af .
		GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
			git -c user.name=rig -c user.email=rig@localhost commit -q \
			-m "$PACKAGE $ver (pristine, sha256 $sum)"
	)
	# One pack without delta search: fast to write, fast to clone, no auto-gc later.
	git -C "$baserepo.tmp/src" -c pack.window=0 repack -a -d -q
	git clone -q --bare "$baserepo.tmp/src" "$baserepo"
	git -C "$baserepo" config gc.auto 0
	rm -rf "$baserepo.tmp"
	touch "$baserepo/rig-done"
fi
basecommit=$(git -C "$baserepo" rev-parse pristine)

G() { git -C "$TREE" -c user.name=rig -c user.email=rig@localhost -c advice.detachedHead=false "$@"; }

# 3. build/linux: clone of the cached repository (re-cloned when the base changes).
if [ -d "$TREE/.git" ] && [ "$(git -C "$TREE" rev-parse -q --verify refs/tags/base 2>/dev/null)" != "$basecommit" ]; then
	info "build/linux has another base: removing it"
	rm -rf "$TREE"
fi
if [ ! -d "$TREE/.git" ]; then
	info "cloning the base into $TREE"
	git clone -q --no-checkout "$baserepo" "$TREE"
	git -C "$TREE" config gc.auto 0
	git -C "$TREE" tag base "$basecommit"
	git -C "$TREE" checkout -q --detach base
fi

# Fingerprint of everything that defines the tree: base, overlay, series.
overlay_files() {
	(cd "$RIG_TOP" && for d in "${OVERLAY_DIRS[@]}"; do [ -d "$d" ] && git ls-files -co --exclude-standard -- "$d"; done) | sort
}
mapfile -t OVL < <(overlay_files)
mapfile -t SERIES < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$RIG_TOP/patches/series")
fp=$( {
	echo "$basecommit"
	# the executable bit too: perf test runs only executable shell tests
	for f in "${OVL[@]}"; do echo "$f"; [ -x "$RIG_TOP/$f" ] && echo x; sha256sum <"$RIG_TOP/$f"; done
	for p in "${SERIES[@]}"; do echo "$p"; sha256sum <"$RIG_TOP/patches/$p" 2>/dev/null || echo missing; done
} | sha256sum | cut -c1-16)

if [ "$(G rev-parse -q --verify "refs/rig/fp" 2>/dev/null || true)" != "$(G rev-parse -q --verify series 2>/dev/null || true)" ] ||
   [ "$(cat "$TREE/.git/rig-fp" 2>/dev/null)" != "$fp" ]; then
	info "building overlay and series commits (fingerprint $fp)"
	G checkout -q -f --detach base
	G clean -q -fdx -e /.git
	# Overlay: new files only. Refuse to overwrite anything that exists upstream.
	overlay_guard "$TREE" "${OVL[@]}" || die "overlay copy refused"
	for f in "${OVL[@]}"; do
		mkdir -p "$TREE/$(dirname "$f")"
		cp -p "$RIG_TOP/$f" "$TREE/$f"
	done
	if [ ${#OVL[@]} -gt 0 ]; then
		G add -f -- "${OVL[@]}"
	fi
	G commit -q --allow-empty -m "overlay: new files from the project repository (${#OVL[@]} files)"
	G tag -f overlay >/dev/null
	# Series: git am, one commit per patch; git apply never fuzzes.
	n=0
	for p in "${SERIES[@]}"; do
		[ -f "$RIG_TOP/patches/$p" ] || die "patches/series lists $p but patches/$p does not exist"
		if ! G am -q --whitespace=nowarn "$RIG_TOP/patches/$p" >"$BUILD/am.log" 2>&1; then
			cat "$BUILD/am.log" >&2
			G am --abort >/dev/null 2>&1 || true
			if [ "$NEWER" = 1 ]; then
				die "patches/$p does not apply to $PACKAGE $ver (newer than $VERSION in patches/UPSTREAM).
  The series is only accepted on a newer point release when it applies with fuzz 0.
  Rebase the series on $ver (git am, fix, git format-patch), or pin $VERSION:
  remove $deb and put the $VERSION .deb into $DEBS."
			fi
			die "patches/$p does not apply (fuzz 0) on top of the base and the preceding patches; regenerate it with git format-patch"
		fi
		n=$((n + 1))
	done
	G branch -f series HEAD
	G update-ref refs/rig/fp series
	echo "$fp" >"$TREE/.git/rig-fp"
	info "series: $n patches applied"
fi

# The partial series, rebuilt whenever the series is.
partial_prefix() { case "$1" in core) echo perf-core- ;; driver) echo coresight- ;; *) return 1 ;; esac; }
if [ "$(G rev-parse -q --verify refs/rig/fp-partial 2>/dev/null || true)" != "$(G rev-parse series)" ]; then
	for part in core driver; do
		G checkout -q -f --detach overlay
		n=0
		for p in "${SERIES[@]}"; do
			case "$p" in "$(partial_prefix $part)"*) ;; *) continue ;; esac
			G am -q --whitespace=nowarn "$RIG_TOP/patches/$p" >"$BUILD/am.log" 2>&1 ||
				{ cat "$BUILD/am.log" >&2; G am --abort >/dev/null 2>&1 || true
				  die "patches/$p does not apply (fuzz 0) on the base without the rest of the series (PARTIAL=$part)"; }
			n=$((n + 1))
		done
		[ $n -gt 0 ] || die "no $(partial_prefix $part)* patch in patches/series (PARTIAL=$part)"
		G branch -f "partial-$part" HEAD
	done
	G update-ref refs/rig/fp-partial series
fi

if [ -n "${PARTIAL:-}" ]; then
	partial_prefix "$PARTIAL" >/dev/null || die "PARTIAL must be core or driver (got '$PARTIAL')"
	[ "${BASE:-0}" != 1 ] || die "BASE=1 and PARTIAL=$PARTIAL: pick one"
	G checkout -q -f "partial-$PARTIAL"
	info "build/linux is base + overlay + $(G rev-list --count overlay..HEAD) $(partial_prefix "$PARTIAL")* patches only (PARTIAL=$PARTIAL)"
elif [ "${BASE:-0}" = 1 ]; then
	G checkout -q -f --detach overlay
	info "build/linux is the pristine base + overlay ($(G describe --always --tags))"
else
	G checkout -q -f series
	info "build/linux is base + overlay + $(G rev-list --count overlay..series) patches"
fi
G clean -q -fdx -e /.git
if [ "$NEWER" = 1 ]; then
	echo "rig: WARNING: **********************************************************" >&2
	echo "rig: WARNING: base is $PACKAGE $ver, NEWER than $VERSION in patches/UPSTREAM." >&2
	echo "rig: WARNING: the series applied with fuzz 0; update patches/UPSTREAM after review." >&2
	echo "rig: WARNING: **********************************************************" >&2
fi
echo "$ver" >"$BUILD/base-version"
