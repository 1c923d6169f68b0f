// SPDX-License-Identifier: GPL-2.0
/*
 * rig_splat: a module that makes the kernel report a problem on request, so the
 * rig's self-test can prove that `make vm` fails a run whose dmesg has one.
 *
 *   insmod rig_splat.ko what=warn      WARN_ON_ONCE()
 *   insmod rig_splat.ko what=lockdep   an AB-BA lock order (lockdep report)
 *   insmod rig_splat.ko what=none      nothing (the control case)
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>

static char *what = "none";
module_param(what, charp, 0444);
MODULE_PARM_DESC(what, "warn, lockdep or none");

static DEFINE_MUTEX(rig_lock_a);
static DEFINE_MUTEX(rig_lock_b);

static int __init rig_splat_init(void)
{
	if (!strcmp(what, "warn")) {
		WARN_ON_ONCE(1);
	} else if (!strcmp(what, "lockdep")) {
		/* A -> B, then B -> A: never deadlocks here, lockdep still reports it. */
		mutex_lock(&rig_lock_a);
		mutex_lock(&rig_lock_b);
		mutex_unlock(&rig_lock_b);
		mutex_unlock(&rig_lock_a);
		mutex_lock(&rig_lock_b);
		mutex_lock(&rig_lock_a);
		mutex_unlock(&rig_lock_a);
		mutex_unlock(&rig_lock_b);
	}
	pr_info("rig_splat: loaded (what=%s)\n", what);
	return 0;
}

static void __exit rig_splat_exit(void)
{
}

module_init(rig_splat_init);
module_exit(rig_splat_exit);
MODULE_DESCRIPTION("Test-only module: trigger a WARN or a lockdep report on request");
MODULE_LICENSE("GPL");
MODULE_INFO(test, "Y");
