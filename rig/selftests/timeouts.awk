# SPDX-License-Identifier: GPL-2.0
# Sum of the per-test timeouts a kselftest_harness program declares:
# TEST_F_TIMEOUT(f, name, t) and TEST_TIMEOUT(name, t) count t, TEST_F and
# TEST the harness' default (30 s), once per variant of the fixture.
/^FIXTURE_VARIANT_ADD\(/ { split(substr($0, 21), a, /[,)]/); nv[a[1]]++; next }
/^TEST_F_TIMEOUT\(/ { split(substr($0, 16), a, /[,) ]+/); t[++n] = a[1]; s[n] = a[3]; next }
/^TEST_F\(/ { split(substr($0, 8), a, /[,) ]+/); t[++n] = a[1]; s[n] = 30; next }
/^TEST_TIMEOUT\(/ { split(substr($0, 14), a, /[,) ]+/); t[++n] = ""; s[n] = a[2]; next }
/^TEST\(/ { t[++n] = ""; s[n] = 30; next }
END {
	for (i = 1; i <= n; i++)
		sum += s[i] * ((t[i] != "" && nv[t[i]]) ? nv[t[i]] : 1)
	print sum
}
