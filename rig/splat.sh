# shellcheck shell=bash
# splat_scan FILE: print kernel reports (WARN, BUG, Oops, panic, lockdep, KASAN,
# UBSAN, atomic-sleep, hung task) found in FILE with some context; return 0 if any.
SPLAT_RE='WARNING:|BUG:|Oops|Kernel panic|kernel BUG at|UBSAN:|KASAN:|general protection fault|Unable to handle kernel|Internal error:|possible recursive locking|circular locking dependency|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked|sleeping function called from invalid context|Call Trace:|Call trace:'
splat_scan() {
	grep -E -n -B2 -A12 "$SPLAT_RE" "$1" | head -80
	grep -qE "$SPLAT_RE" "$1"
}
