#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The series as maintainers receive it, one series per target tree, driven by
# patches/upstream.conf (which patch goes where, which overlay files travel in
# which patch, what is never posted) and patches/cover/<tree>.txt.
#
#   upstream.sh conf    check that patches/series, the overlay and
#                       patches/upstream.conf agree (nothing else)
#   upstream.sh write   make upstream: out/upstream/<tree>/ (git format-patch
#                       --cover-letter), from branches upstream/<tree> built
#                       from the pristine base in build/upstream/linux
#   upstream.sh check   make upstream-check: the same series (AUTHOR or a
#                       stand-in identity) into build/upstream/check/, then:
#                       git am onto the pristine base, checkpatch --strict
#                       with the sign-off, and every patch built on its own
#                       (a perf patch: with the perf shell tests it adds or
#                       changes run, UPSTREAM_PERF_TESTS=0 skips them)
#
# AUTHOR="Name <email>": every patch gets that From: and that person's
# Signed-off-by (running the command with AUTHOR certifies the DCO for them).
# Without it the series has no sign-off and cannot be posted as is.
# Knobs for partial runs of check: UPSTREAM_TREES="tree ...",
# UPSTREAM_ARCHES="x86_64 arm64", UPSTREAM_BUILD=0 (no builds),
# UPSTREAM_PATCHES="1 4" (build only these patches of each tree, by number);
# UPSTREAM_DIR (default build/upstream) holds the clone and the builds.
#
# A patch may add to overlay files that earlier patches carry ('peel PATCH
# FILE...' in upstream.conf): FILE, a git format-patch file in patches/peel/
# made against the overlay files as they are after PATCH, takes out what
# PATCH adds.  The overlay holds the files as the last patch leaves them;
# the patches before PATCH carry them with FILE applied (and the peels of
# every later patch before it), PATCH carries them without.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=rig/series.sh
. "$(dirname "$0")/series.sh"
mode=${1:-write}
case "$mode" in conf|write|check) ;; *) die "usage: upstream.sh conf|write|check" ;; esac
stage "upstream $mode"

CONF=$RIG_TOP/patches/upstream.conf
COVER=$RIG_TOP/patches/cover
U=${UPSTREAM_DIR:-$BUILD/upstream}
UT=$U/linux
OVERLAY_DIRS=(arch drivers kernel include lib mm tools Documentation)
COMMITTER="rig <rig@localhost>"
STANDIN="Upstream Check <upstream-check@example.org>"
T0=$(date +%s)

# ---------------------------------------------------------------------------
# 1. patches/upstream.conf against patches/series and the overlay.

declare -a TREES=() SERIES=() OVL=() NP_PATH=() NP_WHY=()
declare -A T_BUILD=() T_INFO=() T_PREFIX=() T_TO=() T_CC=() P_TREE=() P_CARRY=() \
	P_TRAILER=() P_RIGONLY=() P_FILES=() P_PEEL=()
PEELDIR=$RIG_TOP/patches/peel
errs=0
cerr() { echo "upstream: error: $*" >&2; errs=$((errs + 1)); }

conf_load() {
	local n=0 line kw a b rest
	[ -f "$CONF" ] || die "no $CONF"
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		line=${line%%[[:space:]]}
		case "$line" in ''|'#'*) continue ;; esac
		read -r kw a b rest <<<"$line"
		if [ -z "$a" ] || [ -z "$b" ]; then
			cerr "upstream.conf:$n: '$kw' needs two fields or more"
			continue
		fi
		case "$kw" in
		tree)
			[ -z "${T_BUILD[$a]:-}" ] || cerr "upstream.conf:$n: tree $a declared twice"
			case "$b" in kernel|perf) ;; *) cerr "upstream.conf:$n: tree $a: build must be kernel or perf, not '$b'" ;; esac
			TREES+=("$a"); T_BUILD[$a]=$b; T_INFO[$a]=$rest ;;
		prefix) T_PREFIX[$a]="$b${rest:+ $rest}" ;;
		to) T_TO[$a]+="$b${rest:+ $rest}"$'\n' ;;
		cc) T_CC[$a]+="$b${rest:+ $rest}"$'\n' ;;
		patch)
			[ -z "${P_TREE[$b]:-}" ] || cerr "upstream.conf:$n: $b is assigned twice"
			P_TREE[$b]=$a ;;
		carry) P_CARRY[$a]+=" $b${rest:+ $rest}" ;;
		peel) P_PEEL[$a]+=" $b${rest:+ $rest}" ;;
		trailer) P_TRAILER[$a]+="$b${rest:+ $rest}"$'\n' ;;
		rig-only) P_RIGONLY[$a]="$b${rest:+ $rest}" ;;
		not-posted) NP_PATH+=("$a"); NP_WHY+=("$b${rest:+ $rest}") ;;
		*) cerr "upstream.conf:$n: unknown record '$kw'" ;;
		esac
	done <"$CONF"
}

# Patches of patches/series, and whether the comment block above says rig-only.
declare -A S_MARKED=()
series_load() {
	local p m
	while IFS=$'\t' read -r p m; do
		SERIES+=("$p")
		S_MARKED[$p]=$m
	done < <(awk '
		/^[[:space:]]*#/ { if (!incomment) sect = ""; sect = sect $0; incomment = 1; next }
		{ incomment = 0 }
		{ sub(/#.*/, ""); gsub(/[[:space:]]+$/, "") }
		/^$/ { next }
		{ print $0 "\t" (sect ~ /rig-only/ ? 1 : 0) }' "$RIG_TOP/patches/series")
}

overlay_load() {
	mapfile -t OVL < <(cd "$RIG_TOP" && for d in "${OVERLAY_DIRS[@]}"; do
		[ -d "$d" ] && git ls-files -co --exclude-standard -- "$d"; done | sort)
}

# not_posted FILE: the index of the not-posted entry that covers FILE, or fail.
not_posted() {
	local i
	for i in "${!NP_PATH[@]}"; do
		case "${NP_PATH[$i]}" in
		*/) [[ $1 == "${NP_PATH[$i]}"* ]] && { echo "$i"; return 0; } ;;
		*) [ "$1" = "${NP_PATH[$i]}" ] && { echo "$i"; return 0; } ;;
		esac
	done
	return 1
}

conf_check() {
	local p t f g hit owner i globs
	conf_load
	series_load
	overlay_load
	[ ${#TREES[@]} -gt 0 ] || cerr "upstream.conf declares no tree"
	for t in "${TREES[@]}"; do
		[ -n "${T_PREFIX[$t]:-}" ] || cerr "tree $t has no 'prefix $t ...' line"
		[ -n "${T_TO[$t]:-}" ] || cerr "tree $t has no 'to $t ...' line"
		[ -f "$COVER/$t.txt" ] || cerr "tree $t has no cover letter patches/cover/$t.txt"
	done
	for t in "${!T_PREFIX[@]}" "${!T_TO[@]}" "${!T_CC[@]}"; do
		[ -n "${T_BUILD[$t]:-}" ] || cerr "upstream.conf names tree $t, which no 'tree' line declares"
	done
	for p in "${SERIES[@]}"; do
		if [ -n "${P_TREE[$p]:-}" ] && [ -n "${P_RIGONLY[$p]:-}" ]; then
			cerr "$p is both in tree ${P_TREE[$p]} and rig-only in upstream.conf"
		elif [ -z "${P_TREE[$p]:-}" ] && [ -z "${P_RIGONLY[$p]:-}" ]; then
			cerr "patches/series lists $p, which upstream.conf neither assigns to a tree ('patch TREE $p') nor marks rig-only ('rig-only $p REASON')"
		fi
		if [ -n "${P_RIGONLY[$p]:-}" ] && [ "${S_MARKED[$p]}" != 1 ]; then
			cerr "$p is rig-only in upstream.conf, but the comment above it in patches/series does not say rig-only"
		elif [ -z "${P_RIGONLY[$p]:-}" ] && [ "${S_MARKED[$p]}" = 1 ]; then
			cerr "patches/series lists $p under a rig-only comment, but upstream.conf posts it"
		fi
	done
	for p in "${!P_TREE[@]}" "${!P_RIGONLY[@]}" "${!P_CARRY[@]}" "${!P_TRAILER[@]}" "${!P_PEEL[@]}"; do
		[ -n "${S_MARKED[$p]:-}" ] || cerr "upstream.conf names $p, which patches/series does not list (renamed or dropped?)"
	done
	for p in "${!P_TREE[@]}"; do
		[ -n "${T_BUILD[${P_TREE[$p]}]:-}" ] || cerr "$p: tree ${P_TREE[$p]} is not declared"
	done
	for p in "${!P_CARRY[@]}" "${!P_TRAILER[@]}" "${!P_PEEL[@]}"; do
		[ -z "${P_RIGONLY[$p]:-}" ] || cerr "upstream.conf: carry/trailer/peel for the rig-only $p"
	done
	for t in "${TREES[@]}"; do
		hit=0
		for p in "${SERIES[@]}"; do [ "${P_TREE[$p]:-}" = "$t" ] && hit=1; done
		[ $hit = 1 ] || cerr "tree $t has no patch"
	done
	# Every overlay file: carried by exactly one posted patch, or not-posted.
	declare -A owner_of=()
	for p in "${!P_CARRY[@]}"; do
		read -ra globs <<<"${P_CARRY[$p]}"
		for g in "${globs[@]}"; do
			hit=0
			for f in "${OVL[@]}"; do
				# shellcheck disable=SC2053
				[[ $f == $g ]] || continue
				hit=1
				[ -z "${owner_of[$f]:-}" ] || cerr "$f is carried by both ${owner_of[$f]} and $p"
				owner_of[$f]=$p
				P_FILES[$p]+=" $f"
			done
			[ $hit = 1 ] || cerr "upstream.conf: 'carry $p $g' matches no overlay file"
		done
	done
	for i in "${!NP_PATH[@]}"; do
		hit=0
		for f in "${OVL[@]}"; do
			case "${NP_PATH[$i]}" in
			*/) [[ $f == "${NP_PATH[$i]}"* ]] && hit=1 ;;
			*) [ "$f" = "${NP_PATH[$i]}" ] && hit=1 ;;
			esac
		done
		[ $hit = 1 ] || cerr "upstream.conf: 'not-posted ${NP_PATH[$i]}' matches no overlay file"
		[ -n "${NP_WHY[$i]}" ] || cerr "upstream.conf: 'not-posted ${NP_PATH[$i]}' gives no reason"
	done
	for f in "${OVL[@]}"; do
		owner=${owner_of[$f]:-}
		if i=$(not_posted "$f"); then
			[ -z "$owner" ] || cerr "$f is carried by $owner but also not-posted (${NP_PATH[$i]})"
		elif [ -z "$owner" ]; then
			cerr "overlay file $f is neither carried by a posted patch ('carry PATCH $f') nor not-posted ('not-posted $f REASON') in upstream.conf"
		fi
	done
	[ $errs = 0 ] && stages_build "$(mktemp -d)" clean
	[ $errs = 0 ] || die "patches/upstream.conf and patches/series or the overlay disagree ($errs errors above): update patches/upstream.conf"
	info "upstream.conf: ${#TREES[@]} trees, $(printf '%s\n' "${SERIES[@]}" | while read -r p; do [ -n "${P_TREE[$p]:-}" ] && echo; done | wc -l) posted and ${#P_RIGONLY[@]} rig-only patches, ${#owner_of[@]} carried and $((${#OVL[@]} - ${#owner_of[@]})) not-posted overlay files"
}

# stages_build DIR [clean]: the carried overlay files at each stage of the
# peels.  DIR/0 holds them as the overlay has them; DIR/J is DIR/(J-1) with
# the peels of the J-th last peeled patch applied (git apply, no fuzz).
# STAGE_OF[PATCH] is the stage PATCH's commit carries: the number of peeled
# patches after it.  With clean, DIR is removed at the end (conf check).
declare -A STAGE_OF=()
stages_build() {
	local dir=$1 j=0 i p f pf files=()
	for p in "${!P_FILES[@]}"; do
		read -ra pf <<<"${P_FILES[$p]}"
		files+=("${pf[@]}")
	done
	mkdir -p "$dir/0"
	for f in "${files[@]}"; do
		mkdir -p "$dir/0/$(dirname "$f")"
		cp -p "$RIG_TOP/$f" "$dir/0/$f"
	done
	for ((i = ${#SERIES[@]} - 1; i >= 0; i--)); do
		p=${SERIES[$i]}
		STAGE_OF[$p]=$j
		[ -n "${P_PEEL[$p]:-}" ] || continue
		[ -n "${P_TREE[$p]:-}" ] || cerr "upstream.conf: peel for $p, which is not posted"
		cp -a "$dir/$j" "$dir/$((j + 1))"
		j=$((j + 1))
		for f in ${P_PEEL[$p]}; do
			if [ ! -f "$PEELDIR/$f" ]; then
				cerr "upstream.conf: 'peel $p $f': no patches/peel/$f"
			elif ! (cd "$dir/$j" && GIT_CEILING_DIRECTORIES=$dir git apply "$PEELDIR/$f" >/dev/null); then
				cerr "patches/peel/$f does not apply (no fuzz) to the overlay files after the later peels: regenerate it"
			elif [ "$(cd "$dir/$j" && find . -type f | sort)" != "$(cd "$dir/$((j - 1))" && find . -type f | sort)" ]; then
				cerr "patches/peel/$f adds or removes files: a peel only takes out of carried files"
			fi
		done
	done
	[ "${2:-}" != clean ] || rm -rf "$dir"
}

# tree_patches TREE: the patches of TREE, in patches/series order.
tree_patches() {
	local p
	for p in "${SERIES[@]}"; do
		[ "${P_TREE[$p]:-}" != "$1" ] || echo "$p"
	done
}

conf_check
[ "$mode" = conf ] && exit 0

# ---------------------------------------------------------------------------
# 2. The branches: build/upstream/linux, a clone of build/linux's pristine base.

AUTHOR=${AUTHOR:-}
if [ -n "$AUTHOR" ]; then
	[[ $AUTHOR =~ ^[^\<\>@]+\ \<[^\<\>@[:space:]]+@[^\<\>@[:space:]]+\>$ ]] ||
		die "AUTHOR must be 'Full Name <address>', got '$AUTHOR'"
	case "$AUTHOR" in *@localhost\>|*@example.*) die "AUTHOR '$AUTHOR' is not an address a maintainer can reply to" ;; esac
fi
SIGNER=$AUTHOR
[ "$mode" = check ] && [ -z "$SIGNER" ] && SIGNER=$STANDIN
name_of() { sed -E 's/ <.*//' <<<"$1"; }
mail_of() { sed -E 's/.*<(.*)>/\1/' <<<"$1"; }

[ -d "$TREE/.git" ] || die "no $TREE: run 'make tree' first"
basecommit=$(git -C "$TREE" rev-parse -q --verify 'refs/tags/base^{commit}') || die "$TREE has no tag base: run 'make tree'"
mkdir -p "$U"
exec {ULOCK}>"$U/.tree.lock"
if ! flock -n -x "$ULOCK"; then
	info "waiting for ${U#"$RIG_TOP"/} (another make upstream or upstream-check uses it)"
	flock -x "$ULOCK"
fi
# kernel.sh below runs with BUILD=$U: it must not lock $U/.tree.lock again.
export RIG_TREE_LOCK_HELD=1
if [ -d "$UT/.git" ] && [ "$(git -C "$UT" rev-parse -q --verify 'refs/tags/base^{commit}' 2>/dev/null)" != "$basecommit" ]; then
	info "build/upstream/linux has another base: removing it"
	rm -rf "$UT"
fi
if [ ! -d "$UT/.git" ]; then
	info "cloning the pristine base into ${UT#"$RIG_TOP"/} (never touches build/linux's checkout)"
	git clone -q --no-checkout "$TREE" "$UT"
	git -C "$UT" config gc.auto 0
	git -C "$UT" tag -f base "$basecommit" >/dev/null
fi
UG() {
	GIT_COMMITTER_NAME=$(name_of "${SIGNER:-$COMMITTER}") GIT_COMMITTER_EMAIL=$(mail_of "${SIGNER:-$COMMITTER}") \
		git -C "$UT" -c advice.detachedHead=false -c core.hooksPath=/dev/null "$@"
}
UG checkout -q -f --detach base
UG clean -q -fdx -e /.git

# notes_of PATCHFILE: the text between the first '---' and the diffstat (the
# "below the line" notes, which git am drops).
notes_of() {
	awk '
		!sep && /^---$/ { sep = 1; next }
		!sep { next }
		/^---$/ || /^diff --git / || /^ [^ ].* \| +[0-9]+ / || /^ [0-9]+ files? changed/ { exit }
		{ print }' "$1" | sed -e '/./,$!d' | sed -e ':a' -e '/^\n*$/{$d;N;ba' -e '}'
}

# build_branch TREE: upstream/TREE = base + TREE's patches, each with the
# overlay files it carries, its trailers, AUTHOR and the sign-off.
build_branch() {
	local t=$1 p f msg files k=0 have=()
	UG checkout -q -f -B "upstream/$t" base
	UG clean -q -fdx -e /.git
	mkdir -p "$U/notes/$t"
	rm -f "$U/notes/$t"/*
	while read -r p; do
		k=$((k + 1))
		if ! UG am -q "$RIG_TOP/patches/$p" >"$U/am.log" 2>&1; then
			cat "$U/am.log" >&2
			UG am --abort >/dev/null 2>&1 || true
			die "$t: patches/$p does not apply to the pristine base after the preceding $t patches: it depends on a patch of another tree or on an overlay file it does not carry (patches/upstream.conf)"
		fi
		read -ra files <<<"${P_FILES[$p]:-}"
		set -- "${files[@]}"
		[ $# = 0 ] || overlay_guard "$UT" "$@" || die "$p: a carried file exists upstream"
		# The tree's carried files so far, at this patch's peel stage.
		have+=("$@")
		set -- "${have[@]}"
		if [ $# -gt 0 ]; then
			for f in "$@"; do
				[ -f "$STAGES/${STAGE_OF[$p]}/$f" ] || die "$p: $f is not in peel stage ${STAGE_OF[$p]}"
				mkdir -p "$UT/$(dirname "$f")"
				cp -p "$STAGES/${STAGE_OF[$p]}/$f" "$UT/$f"
			done
			UG add -f -- "$@"
		fi
		msg=$U/msg
		UG log -1 --format=%B >"$msg"
		if [ -n "${P_TRAILER[$p]:-}" ]; then
			while IFS= read -r f; do
				[ -z "$f" ] || git interpret-trailers --in-place --if-exists addIfDifferent --trailer "$f" "$msg"
			done <<<"${P_TRAILER[$p]}"
		fi
		[ -z "$SIGNER" ] || git interpret-trailers --in-place --if-exists addIfDifferent \
			--trailer "Signed-off-by: $SIGNER" "$msg"
		if [ -n "$SIGNER" ]; then
			UG commit -q --amend --no-verify --allow-empty --author="$SIGNER" -F "$msg"
		else
			UG commit -q --amend --no-verify --allow-empty -F "$msg"
		fi
		notes_of "$RIG_TOP/patches/$p" >"$U/notes/$t/$k"
	done < <(tree_patches "$t")
	info "$t: upstream/$t = base + $k patches ($(UG diff --shortstat base "upstream/$t"))"
}

# ---------------------------------------------------------------------------
# 3. git format-patch, the cover letter, To/Cc.

base_text() {
	# shellcheck source=/dev/null
	. "$RIG_TOP/patches/UPSTREAM"
	echo "Linux ${VERSION%%-*} (Debian $PACKAGE $VERSION)"
}

# cover_fill FILE TREE: the subject and body of patches/cover/TREE.txt in
# place of format-patch's placeholders.
cover_fill() {
	local file=$1 t=$2 subj body
	subj=$(sed -n '1p' "$COVER/$t.txt")
	body=$U/cover-body
	sed '1d' "$COVER/$t.txt" | sed -e '/./,$!d' -e "s|@BASE@|$(base_text)|g" \
		-e "s|@TREE@|${T_INFO[$t]}|g" >"$body"
	if [ -z "$subj" ] || [ ! -s "$body" ]; then die "patches/cover/$t.txt: first line the subject, then a blank line and the body"; fi
	awk -v subj="$subj" -v body="$body" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, subj) }
		/^\*\*\* BLURB HERE \*\*\*$/ { while ((getline l < body) > 0) print l; next }
		{ print }' "$file" >"$file.new"
	mv "$file.new" "$file"
}

# notes_insert FILE NOTES: NOTES right below the '---' line of a patch mail.
notes_insert() {
	[ -s "$2" ] || return 0
	awk -v notes="$2" '
		!done && /^---$/ { print; while ((getline l < notes) > 0) print l; print ""; done = 1; next }
		{ print }' "$1" >"$1.new"
	mv "$1.new" "$1"
}

# write_series TREE DEST: format-patch the branch into DEST.
write_series() {
	local t=$1 dest=$2 tmp addr to_mails f k a mails
	local -a fp=(format-patch -q --cover-letter -n --subject-prefix="${T_PREFIX[$t]}")
	tmp=$U/fp-$t
	rm -rf "$tmp" "$dest"
	mkdir -p "$tmp" "$(dirname "$dest")"
	UG "${fp[@]}" -o "$tmp" base.."upstream/$t" >/dev/null
	# get_maintainer.pl on the tree's patches, run from the branch (its MAINTAINERS).
	mapfile -t mails < <(find "$tmp" -name '[0-9]*.patch' ! -name 0000-cover-letter.patch | sort)
	(cd "$UT" && scripts/get_maintainer.pl --no-rolestats --no-git --no-git-fallback "${mails[@]}") \
		>"$U/maint-$t" 2>"$U/maint-$t.err" || { cat "$U/maint-$t.err" >&2; die "$t: scripts/get_maintainer.pl failed"; }
	[ -s "$U/maint-$t" ] || die "$t: scripts/get_maintainer.pl found nobody for the patches in $tmp"
	to_mails=$(while IFS= read -r a; do [ -z "$a" ] || mail_of "$a"; done <<<"${T_TO[$t]}")
	while IFS= read -r addr; do
		[ -n "$addr" ] || continue
		fp+=(--to="$addr")
	done <<<"${T_TO[$t]}"
	while IFS= read -r addr; do
		[ -n "$addr" ] || continue
		case "$addr" in *'<'*) a=$(mail_of "$addr") ;; *) a=$addr ;; esac
		grep -qxF "$a" <<<"$to_mails" && continue
		fp+=(--cc="$addr")
	done < <(cat "$U/maint-$t"; printf '%s' "${T_CC[$t]:-}")
	rm -rf "$tmp"
	mkdir -p "$dest"
	if [ -n "$SIGNER" ]; then
		GIT_AUTHOR_NAME=$(name_of "$SIGNER") GIT_AUTHOR_EMAIL=$(mail_of "$SIGNER") \
			UG "${fp[@]}" -o "$dest" base.."upstream/$t" >/dev/null
	else
		UG "${fp[@]}" -o "$dest" base.."upstream/$t" >/dev/null
	fi
	cover_fill "$dest"/0000-cover-letter.patch "$t"
	k=0
	for f in "$dest"/[0-9]*.patch; do
		[ "$(basename "$f")" != 0000-cover-letter.patch ] || continue
		k=$((k + 1))
		notes_insert "$f" "$U/notes/$t/$k"
	done
}

# verify_series TREE DEST: nothing not-posted or rig-only in the mails, every
# carried file added exactly once, one mail per patch.
verify_series() {
	local t=$1 dest=$2 n want f p path subj i
	n=$(find "$dest" -name '[0-9]*.patch' ! -name 0000-cover-letter.patch | wc -l)
	want=$(tree_patches "$t" | wc -l)
	[ "$n" = "$want" ] || die "$t: $n patch mails written, $want patches in the tree"
	while read -r path; do
		if i=$(not_posted "$path"); then
			die "$t: $path is not-posted (${NP_PATH[$i]}) but is in the series"
		fi
	done < <(sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' "$dest"/*.patch | sort -u)
	for p in "${!P_RIGONLY[@]}"; do
		subj=$(git mailinfo /dev/null /dev/null <"$RIG_TOP/patches/$p" | sed -n 's/^Subject: //p')
		! UG log --format=%s base.."upstream/$t" | grep -qxF "$subj" ||
			die "$t: the rig-only $p ($subj) is in the series"
	done
	# Added once (a later patch with a peel may change it).
	while read -r p; do
		for f in ${P_FILES[$p]:-}; do
			[ "$(awk -v d="diff --git a/$f b/$f" '$0 == d { getline; if (/^new file mode/) n++ }
				END { print n + 0 }' "$dest"/*.patch)" = 1 ] ||
				die "$t: $f (carried by $p) is not added by exactly one mail"
		done
	done < <(tree_patches "$t")
	! grep -q '\*\*\* \(SUBJECT\|BLURB\) HERE \*\*\*' "$dest/0000-cover-letter.patch" ||
		die "$t: the cover letter still has format-patch's placeholders"
}

# write_all DEST: every tree into DEST/<tree>.
write_all() {
	local t dest=$1
	STAGES=$U/stages
	rm -rf "$STAGES"
	stages_build "$STAGES"
	[ $errs = 0 ] || die "the peels of patches/upstream.conf do not apply"
	for t in ${UPSTREAM_TREES:-${TREES[*]}}; do
		[ -n "${T_BUILD[$t]:-}" ] || die "UPSTREAM_TREES: no tree $t"
		build_branch "$t"
		write_series "$t" "$dest/$t"
		verify_series "$t" "$dest/$t"
		info "$t: ${dest#"$RIG_TOP"/}/$t: $(($(find "$dest/$t" -name '*.patch' | wc -l) - 1)) patches + cover letter, prefix [${T_PREFIX[$t]}]"
	done
}

# placeholders DIR: the lead's [[...]] fields still open in the cover letters.
placeholders() {
	cat "$1"/*/0000-cover-letter.patch 2>/dev/null | tr '\n' ' ' | grep -o '\[\[[^]]*\]\]' | tr -s ' ' | sort -u || true
}

unpostable() {
	echo "upstream: ****************************************************************" >&2
	for l in "$@"; do echo "upstream: $l" >&2; done
	echo "upstream: ****************************************************************" >&2
}

if [ "$mode" = write ]; then
	DEST=$OUT/upstream
	rm -rf "$DEST"
	mkdir -p "$DEST"
	write_all "$DEST"
	ph=$(placeholders "$DEST")
	{
		echo "Generated by make upstream from patches/ at $(git -C "$RIG_TOP" describe --always --dirty 2>/dev/null)."
		if [ -n "$AUTHOR" ]; then echo "Author and Signed-off-by: $AUTHOR"; else echo "NOT POSTABLE: no Signed-off-by (run make upstream AUTHOR=\"Name <email>\")."; fi
		[ -z "$ph" ] || { echo "NOT POSTABLE: cover letter fields to fill in:"; echo "$ph"; }
		echo "The base is @BASE@, not a maintainer tree: rebase each series onto its tree before posting." | sed "s|@BASE@|$(base_text)|"
	} >"$DEST/STATUS"
	if [ -z "$AUTHOR" ]; then
		unpostable "out/upstream/ has NO Signed-off-by: it CANNOT BE POSTED AS IS." \
			"The author of the patches certifies the DCO (Documentation/process/submitting-patches.rst)" \
			"by running: make upstream AUTHOR=\"Full Name <address>\""
	fi
	if [ -n "$ph" ]; then
		mapfile -t phs <<<"$ph"
		unpostable "cover letters still have fields to fill in (patches/cover/*.txt):" "${phs[@]}"
	fi
	info "written: $(cd "$DEST" && for t in */; do printf '%s(%d) ' "${t%/}" $(($(find "$t" -name '*.patch' | wc -l) - 1)); done)in ${DEST#"$RIG_TOP"/} ($(($(date +%s) - T0)) s)"
	exit 0
fi

# ---------------------------------------------------------------------------
# 4. make upstream-check.

CK=$U/check
CKO=$U/out
rm -rf "$CK"
mkdir -p "$CK" "$CKO"
fail=0
bad() { echo "upstream-check: FAIL: $*" >&2; fail=1; }
ok() { echo "upstream-check: ok: $*" >&2; }
lap() { echo "upstream-check: $1 in $(($(date +%s) - $2)) s" >&2; }
[ -n "$AUTHOR" ] || info "no AUTHOR: the sign-off is checked with the stand-in $STANDIN"
write_all "$CK"
CHECK_TREES=${UPSTREAM_TREES:-${TREES[*]}}

# 4a. Each tree's mails apply with git am to the pristine base.
t1=$(date +%s)
for t in $CHECK_TREES; do
	UG checkout -q -f -B "check/$t" base
	UG clean -q -fdx -e /.git
	mapfile -t MAILS < <(find "$CK/$t" -name '[0-9]*.patch' ! -name 0000-cover-letter.patch | sort)
	if UG am -q "${MAILS[@]}" >"$U/am.log" 2>&1; then
		if [ -n "$(UG diff "upstream/$t" "check/$t")" ]; then
			bad "$t: the mails applied give another tree than upstream/$t"
		else
			ok "$t: ${#MAILS[@]} mails apply with git am to the pristine base"
		fi
	else
		cat "$U/am.log" >&2
		UG am --abort >/dev/null 2>&1 || true
		bad "$t: the mails do not apply with git am to the pristine base"
	fi
done
lap "git am" "$t1"

# 4b. checkpatch --strict with the sign-off check. rig/checkpatch.ignore
# applies per patch name and per carried file; FILE_PATH_CHANGES ("does
# MAINTAINERS need updating?") only when MAINTAINERS covers every added file.
cp_ignore() { # cp_ignore NAME: the ignored types for NAME, comma-separated
	local glob types t=""
	while read -r glob types _; do
		case "$glob" in ''|'#'*) continue ;; esac
		# shellcheck disable=SC2254
		case "$1" in $glob) t=${t:+$t,}$types ;; esac
	done <"$RIG_TOP/rig/checkpatch.ignore"
	echo "$t"
}
t1=$(date +%s)
for t in $CHECK_TREES; do
	# The tree as the patches leave it: get_maintainer.pl -f needs the new files.
	UG checkout -q -f "check/$t"
	k=0
	while read -r p; do
		k=$((k + 1))
		mail=$(find "$CK/$t" -name "$(printf '%04d' "$k")-*.patch")
		ign=UNKNOWN_COMMIT_ID
		x=$(cp_ignore "$p")
		ign+=${x:+,$x}
		# Every file the mail changes: a peeled patch changes carried files.
		while read -r f; do
			x=$(cp_ignore "$f")
			ign+=${x:+,$x}
		done < <(sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' "$mail" | sort -u)
		if [ -n "${P_FILES[$p]:-}" ]; then
			uncovered=""
			for f in ${P_FILES[$p]}; do
				# Only lists (linux-kernel@ matches everything) means nobody maintains it.
				(cd "$UT" && scripts/get_maintainer.pl --no-git --no-git-fallback --no-rolestats -f "$f" 2>/dev/null) |
					grep -vq '^linux-kernel@vger.kernel.org$' || uncovered+=" $f"
			done
			if [ -z "$uncovered" ]; then ign+=,FILE_PATH_CHANGES; else info "$p: no MAINTAINERS entry for$uncovered"; fi
		fi
		# PATH: Debian's python3 for scripts/spdxcheck.py (python3-ply, python3-git).
		if out=$(cd "$UT" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict --color=never --quiet --ignore "$ign" "$mail" 2>&1); then
			ok "checkpatch --strict: $(basename "$mail")"
		else
			bad "checkpatch --strict: $t/$(basename "$mail")"
			echo "$out" | head -40 >&2
		fi
		grep -q "^Signed-off-by: $SIGNER\$" "$mail" || bad "$t/$(basename "$mail"): no Signed-off-by: $SIGNER"
	done < <(tree_patches "$t")
done
lap "checkpatch" "$t1"

# 4c. Every patch builds on its own.
[ "${UPSTREAM_BUILD:-1}" = 1 ] || { info "UPSTREAM_BUILD=0: no builds"; CHECK_TREES=""; }
ARCHES=${UPSTREAM_ARCHES:-x86_64 arm64}
norm() { # warnings without line numbers, paths relative to the tree
	grep -E 'warning:|error:' "$1" | sed -E -e "s|$UT/||g" -e 's|^(\.\./)+linux/||' -e 's/:[0-9]+(:[0-9]+)?:/:/' | sort -u || true
}
# kdirs TREE: kernel directories (with a Makefile) whose files TREE touches.
kdirs() {
	UG diff --name-only base "upstream/$1" -- . ':!tools' ':!Documentation' ':!include' ':!arch/*/include' |
		xargs -r -n1 dirname | sort -u | while read -r d; do [ -f "$UT/$d/Makefile" ] && echo "$d"; done
}
# kbuild ARCH LABEL: the rig's kernel build (tinyconfig + rig/config, ccache)
# of build/upstream/linux into build/upstream/kbuild-ARCH, then W=1 on DIRS.
kbuild() {
	local arch=$1 label=$2 O d log
	O=$U/kbuild-$arch
	BUILD=$U OUT=$CKO bash "$RIG_TOP/rig/kernel.sh" "$arch" 2>"$CKO/kernel-$arch.err" ||
		{ tail -30 "$CKO/kernel-$arch.err" >&2; return 1; }
	log=$CKO/w1-$arch-$label.log
	: >"$log"
	for d in $DIRS; do
		if ! find "$O/$d" -maxdepth 1 -name '*.o' 2>/dev/null | grep -q .; then
			echo "# $d: not built for $arch" >>"$log"
			continue
		fi
		find "$O/$d" -maxdepth 1 -name '*.o' ! -name 'built-in.a' -delete
		# shellcheck disable=SC2046
		cpu_lock make -C "$UT" O="$O" $(kmake_args "$arch") CC="$(kcc "$arch")" -j"$(nproc)" W=1 "$d/" >>"$log" 2>&1 ||
			{ echo "BUILD-FAILED $d" >>"$log"; return 1; }
	done
	norm "$CKO/kbuild-$arch.log" >"$CKO/warn-$arch-$label.txt"
	norm "$log" >>"$CKO/warn-$arch-$label.txt"
	sort -u -o "$CKO/warn-$arch-$label.txt" "$CKO/warn-$arch-$label.txt"
}
# kselftests ARCH: the kselftest directories the checked-out commit touches,
# built the upstream way against the kernel of build/upstream/kbuild-ARCH.
kselftests() {
	local arch=$1 O d log ka
	O=$U/kbuild-$arch
	read -ra ka <<<"$(kmake_args "$arch")"
	for d in $(UG diff --name-only HEAD~1 HEAD -- tools/testing/selftests | cut -d/ -f4 | sort -u); do
		[ -f "$UT/tools/testing/selftests/$d/Makefile" ] || continue
		log=$CKO/kselftest-$d-$arch.log
		if ! cpu_lock make -s -C "$UT" O="$O" "${ka[@]}" headers >"$log" 2>&1 ||
		   ! cpu_lock make -C "$UT/tools/testing/selftests" "${ka[@]}" O="$O" KDIR="$O" \
			TARGETS="$d" -j"$(nproc)" >>"$log" 2>&1; then
			tail -30 "$log" >&2
			return 1
		fi
		# Warnings in the files the tree adds or changes; the others are the base's.
		UG diff --name-only base HEAD -- "tools/testing/selftests/$d" | xargs -rn1 basename >"$log.files"
		if grep -E 'warning:|error:' "$log" | grep -F -f "$log.files" >&2; then return 1; fi
		ok "kselftest $d builds for $arch (modules: $(find "$UT/tools/testing/selftests/$d" -name '*.ko' -printf '%f ' | sed 's/ $//'))"
		UG clean -q -fdx -- "tools/testing/selftests/$d"
	done
}
# cpu_hold / cpu_release: the CPU lock (rig/lib.sh cpu_lock) for one build unit
# (a kernel and its W=1 directories, a perf build), so that a unit does not
# queue for the lock again between its steps.
# perf_tests TREE K: the perf shell tests patch K adds or changes, run
# with the perf it built (UPSTREAM_PERF_TESTS=0: not run).  A test that a
# peel cuts down runs as that patch has it.
perf_tests() {
	local t=$1 k=$2 f tests=()
	[ "${UPSTREAM_PERF_TESTS:-1}" = 1 ] || return 0
	while read -r f; do
		[ -f "$UT/$f" ] && tests+=("$UT/$f")
	done < <(UG diff --name-only HEAD~1 HEAD -- 'tools/perf/tests/shell/*.sh')
	[ ${#tests[@]} -gt 0 ] || return 0
	if bash "$RIG_TOP/rig/perf/run-tests.sh" "$U/perf/perf" "${tests[@]}" >"$CKO/perf-test-$k.log" 2>&1; then
		ok "$t: patch $k: its perf tests pass ($(grep -c '^RESULT .* PASS' "$CKO/perf-test-$k.log") passed, $(grep -c '^RESULT .* SKIP' "$CKO/perf-test-$k.log") skipped)"
	else
		grep -v '^RESULT .* PASS' "$CKO/perf-test-$k.log" | tail -40 >&2
		bad "$t: patch $k: a perf test it adds or changes fails with its perf (log: ${CKO#"$RIG_TOP"/}/perf-test-$k.log)"
	fi
}
CPU_HELD=0
cpu_hold() {
	[ "${RIG_CPU_LOCK_HELD:-}" != 1 ] || return 0
	exec {CPUFD}>"$RIG_CACHE/cpu.lock"
	flock "$CPUFD"
	export RIG_CPU_LOCK_HELD=1
	CPU_HELD=1
}
cpu_release() {
	[ "$CPU_HELD" = 1 ] || return 0
	flock -u "$CPUFD"
	exec {CPUFD}>&-
	unset RIG_CPU_LOCK_HELD
	CPU_HELD=0
}
for t in $CHECK_TREES; do
	t1=$(date +%s)
	mapfile -t COMMITS < <(UG rev-list --reverse "base..check/$t")
	NUMS=${UPSTREAM_PATCHES:-$(seq -s ' ' 1 ${#COMMITS[@]})}
	case "${T_BUILD[$t]}" in
	kernel)
		DIRS=$(kdirs "$t" | tr '\n' ' ')
		info "$t: kernel builds ($ARCHES) of patches $NUMS of ${#COMMITS[@]}; W=1 on: $DIRS"
		UG checkout -q -f --detach base
		for arch in $ARCHES; do
			ts=$(date +%s)
			cpu_hold
			kbuild "$arch" base || bad "$t: the pristine base does not build for $arch"
			cpu_release
			lap "$t: base, $arch" "$ts"
		done
		for k in $NUMS; do
			c=${COMMITS[$((k - 1))]:?"$t has no patch $k"}
			UG checkout -q -f --detach "$c"
			for arch in $ARCHES; do
				ts=$(date +%s)
				cpu_hold
				if ! kbuild "$arch" "$k"; then
					cpu_release
					bad "$t: patch $k ($(UG log -1 --format=%s)) does not build for $arch (log: ${CKO#"$RIG_TOP"/}/kbuild-$arch.log)"
					continue
				fi
				new=$(comm -13 "$CKO/warn-$arch-base.txt" "$CKO/warn-$arch-$k.txt")
				if [ -n "$new" ]; then
					bad "$t: patch $k for $arch: new warnings (W=1) vs the base:"
					echo "$new" >&2
				else
					ok "$t: patch $k ($(UG log -1 --format=%s)) builds for $arch, no new W=1 warning"
				fi
				kselftests "$arch" || bad "$t: patch $k: kselftest build failed for $arch"
				cpu_release
				lap "$t: patch $k, $arch" "$ts"
			done
		done ;;
	perf)
		info "$t: perf builds of patches $NUMS of ${#COMMITS[@]} (rig/perf/build.sh into ${U#"$RIG_TOP"/}/perf)"
		for k in $NUMS; do
			c=${COMMITS[$((k - 1))]:?"$t has no patch $k"}
			ts=$(date +%s)
			UG checkout -q -f --detach "$c"
			cpu_hold
			if bash "$RIG_TOP/rig/perf/build.sh" "$U/perf" "$UT" >"$CKO/perf-$k.log" 2>&1; then
				ok "$t: patch $k ($(UG log -1 --format=%s)) builds perf"
				perf_tests "$t" "$k"
			else
				tail -30 "$CKO/perf-$k.log" >&2
				bad "$t: patch $k ($(UG log -1 --format=%s)) does not build perf (log: ${CKO#"$RIG_TOP"/}/perf-$k.log)"
			fi
			cpu_release
			lap "$t: patch $k, perf" "$ts"
		done ;;
	esac
	lap "$t: builds" "$t1"
done
UG checkout -q -f --detach base

lap "make upstream-check (wall time)" "$T0"
[ $fail = 0 ] || die "upstream-check failed (FAIL lines above)"
ph=$(placeholders "$CK")
if [ -n "$ph" ]; then
	mapfile -t phs <<<"$ph"
	unpostable "the cover letters still have fields to fill in:" "${phs[@]}"
fi
if [ "${UPSTREAM_BUILD:-1}" = 1 ]; then
	info "upstream-check: every tree applies, is checkpatch-clean with the sign-off and builds patch by patch"
else
	info "upstream-check: every tree applies and is checkpatch-clean with the sign-off; NOT BUILT (UPSTREAM_BUILD=0)"
fi
