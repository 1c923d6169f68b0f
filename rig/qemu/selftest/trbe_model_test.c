// SPDX-License-Identifier: GPL-2.0
/*
 * trbe_model_test: the rig's self-test of QEMU's TRBE/ETE/TRF model
 * (the patches in rig/qemu, -cpu max,x-trbe=on). Loaded in the arm64 guest, it
 * programs the TRBE and the ETE of the CPU it runs on directly, with
 * interrupts off, while the arm_trbe and ETE drivers are idle, and checks
 * what the model reports in TRBSR_EL1:
 *
 *   good      a record is written at TRBPTR: A-Sync first, the pointer moves
 *   fill      the last record before LIMIT: stop, IRQ, WRAP, BSC filled,
 *             TRBPTR back to BASE
 *   lost      a record while stopped is not written; the next one starts
 *             with an Overflow packet
 *   limit     LIMIT below BASE: a buffer management event, nothing written
 *   outside   TRBPTR below BASE: a buffer management event
 *   unmapped  the buffer page has no translation (the guard page after a
 *             vmalloc area): EC 0x24, translation fault
 *
 * Every case restores the registers it touched and clears TRBSR_EL1 before
 * interrupts come back on. The module prints one line per case and fails to
 * load (-EINVAL) if any case fails, so `insmod` reports the verdict.
 */
#include <linux/bitfield.h>
#include <linux/module.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <asm/barrier.h>
#include <asm/sysreg.h>

#define TRBSR_EC	GENMASK_ULL(31, 26)
#define TRBSR_IRQ	BIT_ULL(22)
#define TRBSR_WRAP	BIT_ULL(20)
#define TRBSR_EA	BIT_ULL(18)
#define TRBSR_S		BIT_ULL(17)
#define TRBSR_MSS	GENMASK_ULL(15, 0)
#define TRBLIMITR_E	BIT_ULL(0)
#define TRBLIMITR_TM_IGNR (3ULL << 3)
#define TRFCR_E1TRE	BIT_ULL(1)
#define TRFCR_E0TRE	BIT_ULL(0)
#define REC		64

struct regs {
	u64 trfcr, victlr, configr;
};

static int failures;

static void save(struct regs *r)
{
	r->trfcr = read_sysreg_s(SYS_TRFCR_EL1);
	r->victlr = read_sysreg_s(SYS_TRCVICTLR);
	r->configr = read_sysreg_s(SYS_TRCCONFIGR);
}

static void restore(const struct regs *r)
{
	write_sysreg_s(0, SYS_TRCPRGCTLR);
	write_sysreg_s(0, SYS_TRBLIMITR_EL1);
	isb();
	write_sysreg_s(0, SYS_TRBSR_EL1);
	write_sysreg_s(0, SYS_TRBPTR_EL1);
	write_sysreg_s(0, SYS_TRBBASER_EL1);
	write_sysreg_s(r->victlr, SYS_TRCVICTLR);
	write_sysreg_s(r->configr, SYS_TRCCONFIGR);
	write_sysreg_s(r->trfcr, SYS_TRFCR_EL1);
	isb();
}

/*
 * Program the TRBE with base/limit/ptr, enable trace at EL1 and start the
 * trace unit (the model writes a record when tracing starts at a traced
 * exception level), stop it again and return TRBSR_EL1. *ptr_out gets
 * TRBPTR_EL1. keep_status: do not clear TRBSR first (the "lost" case).
 */
static u64 one_record(u64 base, u64 limit, u64 ptr, u64 *ptr_out, bool keep_status)
{
	u64 sr;

	write_sysreg_s(0, SYS_TRCPRGCTLR);
	write_sysreg_s(0, SYS_TRBLIMITR_EL1);
	isb();
	if (!keep_status)
		write_sysreg_s(0, SYS_TRBSR_EL1);
	write_sysreg_s(base, SYS_TRBBASER_EL1);
	write_sysreg_s(ptr, SYS_TRBPTR_EL1);
	write_sysreg_s(TRFCR_E1TRE | TRFCR_E0TRE, SYS_TRFCR_EL1);
	write_sysreg_s(0, SYS_TRCVICTLR);	/* no exception level excluded */
	isb();
	write_sysreg_s((limit & PAGE_MASK) | TRBLIMITR_TM_IGNR | TRBLIMITR_E,
		       SYS_TRBLIMITR_EL1);
	isb();
	write_sysreg_s(1, SYS_TRCPRGCTLR);
	isb();
	write_sysreg_s(0, SYS_TRCPRGCTLR);
	write_sysreg_s(0, SYS_TRBLIMITR_EL1);
	isb();
	sr = read_sysreg_s(SYS_TRBSR_EL1);
	*ptr_out = read_sysreg_s(SYS_TRBPTR_EL1);
	return sr;
}

static void verdict(const char *name, bool ok, u64 sr, u64 ptr, const char *want)
{
	pr_info("trbe_model_test: %s: %s: TRBSR_EL1=%#llx TRBPTR_EL1=%#llx (want %s)\n",
		name, ok ? "ok" : "FAILED", sr, ptr, want);
	if (!ok)
		failures++;
}

static bool is_async(const u8 *p)
{
	int i;

	for (i = 0; i < 11; i++)
		if (p[i])
			return false;
	return p[11] == 0x80;
}

static void run_cases(u8 *buf, unsigned long hole)
{
	u64 base = (u64)buf, limit = base + 2 * PAGE_SIZE, sr, ptr;
	bool ok;

	/* good: one record at base + 128. */
	memset(buf, 0xaa, 2 * PAGE_SIZE);
	sr = one_record(base, limit, base + 2 * REC, &ptr, false);
	ok = !(sr & (TRBSR_S | TRBSR_IRQ | TRBSR_EC | TRBSR_EA)) &&
	     ptr == base + 3 * REC && is_async(buf + 2 * REC) &&
	     buf[2 * REC - 1] == 0xaa && buf[3 * REC] == 0xaa;
	verdict("good", ok, sr, ptr,
		"running, TRBPTR +64, A-Sync at the old TRBPTR, nothing else written");

	/* fill: the last record slot before LIMIT. */
	sr = one_record(base, limit, limit - REC, &ptr, false);
	ok = (sr & TRBSR_S) && (sr & TRBSR_IRQ) && (sr & TRBSR_WRAP) &&
	     !FIELD_GET(TRBSR_EC, sr) && (FIELD_GET(TRBSR_MSS, sr) & 0x3f) == 1 &&
	     ptr == base && is_async(buf + 2 * PAGE_SIZE - REC);
	verdict("fill", ok, sr, ptr, "S, IRQ, WRAP, EC 0, BSC 1 (filled), TRBPTR == TRBBASER");

	/* lost: still stopped (TRBSR kept), nothing written; then restart. */
	memset(buf, 0xaa, REC);
	sr = one_record(base, limit, base, &ptr, true);
	ok = (sr & TRBSR_S) && ptr == base && buf[0] == 0xaa;
	verdict("lost (stopped)", ok, sr, ptr, "S kept, TRBPTR unchanged, nothing written");
	sr = one_record(base, limit, base, &ptr, false);
	ok = !(sr & TRBSR_S) && ptr == base + REC && buf[0] == 0x00 && buf[1] == 0x05 &&
	     is_async(buf + 2);
	verdict("lost (next record)", ok, sr, ptr,
		"running, the record starts with Overflow (00 05) then A-Sync");

	/* limit below base */
	memset(buf, 0xaa, 2 * PAGE_SIZE);
	sr = one_record(base + PAGE_SIZE, base, base + PAGE_SIZE, &ptr, false);
	ok = (sr & TRBSR_S) && (sr & TRBSR_IRQ) && !FIELD_GET(TRBSR_EC, sr) &&
	     !(sr & TRBSR_WRAP) && buf[PAGE_SIZE] == 0xaa && buf[0] == 0xaa;
	verdict("limit below base", ok, sr, ptr, "S, IRQ, EC 0, no WRAP, nothing written");

	/* pointer outside [base, limit) */
	sr = one_record(base + PAGE_SIZE, limit, base, &ptr, false);
	ok = (sr & TRBSR_S) && (sr & TRBSR_IRQ) && !FIELD_GET(TRBSR_EC, sr) &&
	     !(sr & TRBSR_WRAP) && buf[0] == 0xaa && ptr == base;
	verdict("pointer below base", ok, sr, ptr, "S, IRQ, EC 0, no WRAP, nothing written");

	/* unmapped: the guard page after the buffer's vmalloc area */
	sr = one_record(hole, hole + PAGE_SIZE, hole, &ptr, false);
	ok = (sr & TRBSR_S) && (sr & TRBSR_IRQ) && FIELD_GET(TRBSR_EC, sr) == 0x24 &&
	     (FIELD_GET(TRBSR_MSS, sr) & 0x3c) == 0x04 && ptr == hole;
	verdict("unmapped buffer page", ok, sr, ptr, "S, IRQ, EC 0x24, FSC translation fault");
}

static int __init trbe_model_test_init(void)
{
	unsigned long flags;
	struct regs saved;
	u8 *buf;

	if (!FIELD_GET(ID_AA64DFR0_EL1_TraceBuffer_MASK, read_sysreg(id_aa64dfr0_el1)) ||
	    !FIELD_GET(ID_AA64DFR0_EL1_TraceVer_MASK, read_sysreg(id_aa64dfr0_el1)) ||
	    !FIELD_GET(ID_AA64DFR0_EL1_TraceFilt_MASK, read_sysreg(id_aa64dfr0_el1))) {
		pr_err("trbe_model_test: ID_AA64DFR0_EL1 %#llx: no TRBE, ETE or TRF\n",
		       read_sysreg(id_aa64dfr0_el1));
		return -ENODEV;
	}
	/*
	 * vmalloc memory is page aligned (BASE and LIMIT may be programmed),
	 * and the page after the area is a guard page that is never mapped.
	 */
	buf = vmalloc(2 * PAGE_SIZE);
	if (!buf)
		return -ENOMEM;
	local_irq_save(flags);
	save(&saved);
	run_cases(buf, (unsigned long)buf + 2 * PAGE_SIZE);
	restore(&saved);
	local_irq_restore(flags);
	vfree(buf);
	pr_info("trbe_model_test: %s (%d failed)\n", failures ? "FAILED" : "all ok", failures);
	return failures ? -EINVAL : 0;
}

static void __exit trbe_model_test_exit(void)
{
}

module_init(trbe_model_test_init);
module_exit(trbe_model_test_exit);
MODULE_DESCRIPTION("Self-test of the rig's QEMU TRBE/ETE/TRF model");
MODULE_LICENSE("GPL");
