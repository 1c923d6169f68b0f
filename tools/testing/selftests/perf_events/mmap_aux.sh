#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The aux variant of the mmap test needs an AUX-capable PMU, which most
# test machines (and every QEMU guest) lack: run it with the perf_swaux
# test module loaded, as aux_set_output does, and unload it again.
# Skips (4) when the module cannot be loaded.

ksft_skip=4
dir=$(dirname "$0")
ko=$dir/test_modules/perf_swaux.ko
loaded=

if [ ! -d /sys/module/perf_swaux ]; then
	if ! insmod "$ko"; then
		echo "mmap_aux: cannot load $ko: SKIP"
		exit $ksft_skip
	fi
	loaded=1
fi
"$dir/mmap" -v aux
rc=$?
if [ -n "$loaded" ] && ! rmmod perf_swaux; then
	echo "mmap_aux: cannot unload perf_swaux"
	rc=1
fi
exit $rc
