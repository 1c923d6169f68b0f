#!/usr/bin/env bash
# make lint: series lint, checkpatch --strict on patches and overlay C files,
# sparse (C=2) + W=1 on the kernel C files the series touches (their objects
# only), for both arches compared with the same build of the base: anything
# new fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/series.sh"
stage lint
cd "$RIG_TOP" || exit 1
fail=0
nbad=0
bad() { echo "lint: FAIL: $*" >&2; fail=1; nbad=$((nbad + 1)); }
ok() { echo "lint: ok: $*" >&2; }

# 1. Series lint (Debian check-patches style).
mapfile -t SERIES < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' patches/series)
mapfile -t FILES < <(find patches -maxdepth 1 -type f ! -name series ! -name UPSTREAM ! -name upstream.conf -printf '%f\n' | sort)
for p in "${SERIES[@]}"; do
	[ -f "patches/$p" ] || bad "patches/series lists $p, which does not exist"
done
for f in "${FILES[@]}"; do
	printf '%s\n' "${SERIES[@]}" | grep -qxF "$f" || bad "patches/$f is not listed in patches/series"
done
[ "$(printf '%s\n' "${SERIES[@]}" | sort | uniq -d)" = "" ] || bad "patches/series lists a patch twice"
for p in "${SERIES[@]}"; do
	f=patches/$p
	[ -f "$f" ] || continue
	grep -q '^From [0-9a-f]\{40\} ' "$f" || bad "$p: not a git format-patch file (no 'From <sha>' line)"
	grep -q '^From: ' "$f" || bad "$p: no From: header"
	grep -q '^Subject: ' "$f" || bad "$p: no Subject: header"
	! grep -q '^Signed-off-by:' "$f" || bad "$p: carries a Signed-off-by (the human who posts the series adds it)"
	[ "$(sed -n '/^Subject:/,/^---$/p' "$f" | sed '1,/^$/d;$d' | grep -c .)" -ge 3 ] ||
		bad "$p: commit message body is too short (context, problem, solution)"
done
[ $fail = 0 ] && ok "patches/series lists exactly the ${#FILES[@]} patches in patches/, headers present"

# 2. Every patch applies with fuzz 0, in order, on base + overlay (index only).
[ -d "$TREE/.git" ] || die "no $TREE: run 'make tree' first"
series_apply_check "$TREE" overlay "${SERIES[@]/#/$RIG_TOP/patches/}" || bad "series does not apply with fuzz 0"
[ $fail = 0 ] && ok "the series applies with fuzz 0"

# 3. checkpatch --strict (the sign-off is added by the human who posts the series).
# UNKNOWN_COMMIT_ID: the base is a source package without upstream history, so
# checkpatch cannot look up Fixes: ids; their format is still checked.
CP=("$TREE/scripts/checkpatch.pl" --strict --no-signoff --color=never --quiet --ignore UNKNOWN_COMMIT_ID)
# rig/checkpatch.ignore: message types ignored per file or patch, with reasons.
cp_ignore() { # cp_ignore NAME: --ignore TYPES for NAME, or nothing
	local glob types t=""
	while read -r glob types _; do
		case "$glob" in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2254
		case "$1" in $glob) t=${t:+$t,}$types ;; esac
	done <"$RIG_TOP/rig/checkpatch.ignore"
	[ -z "$t" ] || echo "--ignore $t"
}
# One checkpatch per CPU at a time (cp_run), each into $cpd; cp_collect
# reports them in the order they were started.
cpd=$(mktemp -d)
cp_names=()
cp_run() { # cp_run NAME CHECKPATCH-ARGS...
	local n=${#cp_names[@]}
	cp_names+=("$1")
	shift
	if [ "$n" -ge "$(nproc)" ]; then wait -n || true; fi
	( cd "$TREE" && "${CP[@]}" "$@" >"$cpd/$n.out" 2>&1; echo $? >"$cpd/$n.rc" ) &
}
cp_collect() {
	local i
	wait
	for i in "${!cp_names[@]}"; do
		[ "$(cat "$cpd/$i.rc" 2>/dev/null)" = 0 ] && continue
		bad "checkpatch: ${cp_names[$i]}"
		head -40 "$cpd/$i.out" >&2
	done
	rm -rf "$cpd"
	cp_names=()
	cpd=$(mktemp -d)
}
for p in "${SERIES[@]}"; do
	# shellcheck disable=SC2046
	cp_run "$p" $(cp_ignore "$p") "$RIG_TOP/patches/$p"
done
mapfile -t CFILES < <(git ls-files -co --exclude-standard -- drivers kernel include lib mm arch tools | grep -E '\.[ch]$' || true)
for f in "${CFILES[@]}"; do
	# shellcheck disable=SC2046
	cp_run "$f" $(cp_ignore "$f") --no-tree -f "$RIG_TOP/$f"
done
cp_collect
ok "checkpatch --strict ran on ${#SERIES[@]} patches and ${#CFILES[@]} overlay C files"

# 3b. The QEMU model (rig/qemu): format-patch files listed in rig/qemu/series,
#     no sign-off, clean under QEMU's own scripts/checkpatch.pl (no error; the
#     one warning allowed is its question about MAINTAINERS for a new file:
#     target/arm/ is maintained as a whole). The self-test module: kernel
#     checkpatch --strict.
mapfile -t QSERIES < <(grep -v '^\s*\(#\|$\)' rig/qemu/series)
qemu_bad=$nbad
for f in rig/qemu/*.patch; do
	printf '%s\n' "${QSERIES[@]}" | grep -qxF "${f#rig/qemu/}" || bad "$f is not listed in rig/qemu/series"
done
QCP=$RIG_CACHE/qemu/src/scripts/checkpatch.pl
[ -f "$QCP" ] || bash rig/qemu/build.sh >/dev/null || bad "make qemu failed (needed for QEMU's checkpatch.pl)"
for p in "${QSERIES[@]}"; do
	f=rig/qemu/$p
	[ -f "$f" ] || { bad "rig/qemu/series lists $p, which does not exist"; continue; }
	grep -q '^From [0-9a-f]\{40\} ' "$f" || bad "$f: not a git format-patch file"
	! grep -q '^Signed-off-by:' "$f" || bad "$f: carries a Signed-off-by"
	out=$(perl "$QCP" --no-signoff "$f" 2>&1) || true
	errs=$(sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings.*/\1 \2/p' <<<"$out")
	warns_ok=$(grep -c '^WARNING: added, moved or deleted file(s)' <<<"$out" || true)
	if [ -z "$errs" ] || [ "${errs% *}" != 0 ] || [ "${errs#* }" != "$warns_ok" ]; then
		bad "QEMU checkpatch: $f (${errs:-no result})"
		echo "$out" | head -40 >&2
	fi
done
for f in rig/qemu/selftest/*.c; do
	# shellcheck disable=SC2046
	cp_run "$f" $(cp_ignore "$f") --no-tree -f "$RIG_TOP/$f"
done
cp_collect
rmdir "$cpd"
[ "$nbad" -gt "$qemu_bad" ] ||
	ok "rig/qemu: ${#QSERIES[@]} patches clean under QEMU's checkpatch.pl, the self-test module under checkpatch --strict"

# 4. shellcheck on the rig and on overlay shell scripts.
mapfile -t SH < <( { git ls-files -co --exclude-standard -- rig .ci '*.sh'; } | sort -u |
	while read -r f; do [ -f "$f" ] && head -1 "$f" | grep -qE '^#!.*(ba)?sh' && echo "$f"; done; git ls-files -co --exclude-standard -- 'rig/*.sh' )
mapfile -t SH < <(printf '%s\n' "${SH[@]}" | sort -u)
if [ ${#SH[@]} -gt 0 ]; then
	if shellcheck -x -S warning "${SH[@]}" >&2; then
		ok "shellcheck on ${#SH[@]} scripts"
	else
		bad "shellcheck"
	fi
fi

# perf test runs only the shell tests it may execute: a test without the
# executable bit is silently left out (and git format-patch carries the mode).
nx=0
while read -r mode f; do
	if [ "$mode" != 100755 ]; then
		bad "$f is not executable in git (mode $mode): perf test would never run it"
		nx=$((nx + 1))
	fi
done < <(git ls-files -s -- 'tools/perf/tests/shell/*.sh' | awk '{ print $1, $4 }')
[ $nx = 0 ] && ok "the perf shell tests are executable"

# 5. sparse + W=1 on the kernel files the series touches, vs the base.
SPARSE=$RIG_CACHE/sparse/bin/sparse
[ "$(cd /tmp && "$TREE/scripts/checker-valid.sh" "$SPARSE")" = 1 ] || die "$SPARSE is not usable for this tree: run 'make deps'"
mapfile -t KFILES < <(git -C "$TREE" diff --name-only overlay series -- . ':!tools' ':!Documentation' ':!scripts' | grep -E '\.c$' || true)
if [ "${LINT_NO_BUILD:-0}" = 1 ]; then
	info "LINT_NO_BUILD=1: sparse and W=1 comparison skipped"
elif [ ${#KFILES[@]} -eq 0 ]; then
	ok "the series touches no kernel C file: no sparse/W=1 comparison needed"
else
	# The objects of the touched files only: single-object targets, so
	# sparse and W=1 see exactly the files the series changes.
	mapfile -t KOBJS < <(printf '%s\n' "${KFILES[@]}" | sed 's/\.c$/.o/')
	info "sparse + W=1 on ${KFILES[*]}"
	build_checks() { # $1 = base|series
		local arch O L o objs
		for arch in x86_64 arm64; do
			O=$BUILD/lint-$arch
			L=$BUILD/lint-$1-$arch.log
			# The objects this arch's kernel builds (coresight: arm64 only)
			objs=()
			for o in "${KOBJS[@]}"; do
				[ ! -f "$(kbuild_dir "$arch")/$o" ] || objs+=("$o")
			done
			[ -f "$(kbuild_dir "$arch")/.config" ] || die "no $(kbuild_dir "$arch")/.config: run 'make kernel ARCH=$arch' first"
			mkdir -p "$O"
			cmp -s "$(kbuild_dir "$arch")/.config" "$O/.config" || cp "$(kbuild_dir "$arch")/.config" "$O/.config"
			# shellcheck disable=SC2046
			cpu_lock make -s -C "$TREE" O="$O" $(kmake_args "$arch") CC="$(kcc "$arch")" olddefconfig prepare >/dev/null 2>&1 ||
				die "lint: prepare failed for $arch"
			: >"$L"
			[ ${#objs[@]} -gt 0 ] || continue
			# Not silent even under `make -s lint`: the CHECK lines are
			# the count of files sparse ran on.
			# shellcheck disable=SC2046
			MAKEFLAGS='' cpu_lock make -C "$TREE" O="$O" $(kmake_args "$arch") CC="$(kcc "$arch")" -j2 \
				C=2 CHECK="$SPARSE" W=1 "${objs[@]}" >>"$L" 2>&1 || echo "BUILD-FAILED ${objs[*]}" >>"$L"
		done
	}
	norm() { # warnings without line numbers, paths relative to the tree
		grep -E 'warning:|error:|BUILD-FAILED|: ERROR:|: WARNING:|: CHECK:' "$1" |
			sed -E -e "s|$TREE/||g" -e 's/:[0-9]+(:[0-9]+)?:/:/' | sort -u
	}
	# Hold the tree for the whole base/series comparison.
	tree_lock exclusive
	BASE=1 bash "$RIG_TOP/rig/tree.sh"
	build_checks base
	bash "$RIG_TOP/rig/tree.sh"
	build_checks series
	for arch in x86_64 arm64; do
		n=$(grep -c '  CHECK ' "$BUILD/lint-series-$arch.log" || true)
		[ "$n" -gt 0 ] || bad "$arch: sparse ran on no file (no CHECK line in build/lint-series-$arch.log)"
		comm -13 <(norm "$BUILD/lint-base-$arch.log") <(norm "$BUILD/lint-series-$arch.log") >"$BUILD/lint-new-$arch.txt"
		if [ -s "$BUILD/lint-new-$arch.txt" ]; then
			bad "$arch: new sparse/W=1 reports:"
			cat "$BUILD/lint-new-$arch.txt" >&2
		else
			ok "$arch: sparse ran on $n files; no new sparse or W=1 report vs the base"
		fi
	done
fi

[ $fail = 0 ] || die "lint failed (see FAIL lines above)"
