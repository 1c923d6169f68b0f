// SPDX-License-Identifier: GPL-2.0
/*
 * swaux: perf support for the software AUX PMU of the perf_events selftests
 * (tools/testing/selftests/perf_events/test_modules/perf_swaux.c), a
 * TRBE-like per-CPU sink that writes self-describing 64-byte records.
 *
 * Record: `perf record -e swaux//` maps the AUX area of the event (per CPU
 * with -a, -C or a workload, or per thread) and writes AUXTRACE events;
 * -S takes snapshots of an overwrite-mode buffer.
 *
 * Decode (perf script, perf report): every perf AUX buffer (AUXTRACE idx) is
 * scanned in record steps and checked:
 *  - every record has the magic and size, else it is "invalid" (an all-zero
 *    record is "empty": invalid too, except in snapshot mode);
 *  - seq numbers the records written into one sink buffer (buf_id), so the
 *    records of one buf_id in one perf buffer are contiguous. A gap is
 *    "flagged" (explained) when a PERF_RECORD_AUX of that perf buffer with
 *    TRUNCATED, PARTIAL or COLLISION overlaps it, when a PERF_RECORD_LOST or
 *    LOST_SAMPLES was seen for its CPU, or in snapshot mode; an unflagged
 *    gap is an error;
 *  - the buffer's buf_id is the one most of its records carry; records of
 *    another buf_id and records with SWAUX_F_MISMATCH are "misplaced", an
 *    error.
 * perf report -D dumps every record. At the end of the session a summary is
 * printed to stdout, one line per perf buffer, every line starting with
 * "swaux:", the last one "swaux: verdict: ok", "swaux: verdict: N errors" or,
 * when the file holds neither AUX data nor PERF_RECORD_AUX, "swaux: verdict:
 * no AUX data" (nothing was checked). PERF_RECORD_AUX without any AUX data
 * is an error.
 *
 * The same checks judge the trace of QEMU's ETE model (the rig's emulated
 * Armv9 CPU, -cpu max,x-trbe=on) when PERF_SWAUX_ETE_MODEL is set in the
 * environment of a command that reads a cs_etm recording: instead of
 * OpenCSD, every 64-byte record the model writes ([Overflow] A-Sync
 * TraceInfo TraceOn Timestamp Context Address Ignore...) is parsed into
 * (cpu, seq, pid) from its Timestamp (cpu << 48 | seq) and Context
 * (CONTEXTIDR_EL1) packets. The record's CPU plays the part of buf_id: a
 * per-CPU perf buffer must hold the records of its CPU only (so a
 * --per-thread recording, whose buffers take any CPU's records, reports
 * the other CPUs' records as misplaced). A gap right
 * before a record that starts with an Overflow packet is flagged: the
 * trace unit says it lost trace there; of the PERF_RECORD_AUX flags only
 * TRUNCATED flags a gap (the TRBE driver sets COLLISION at every wrap of
 * its fill-mode buffer, whether trace was lost or not). 64-byte blocks of Ignore packets
 * (the TRBE driver's padding) are counted as padding, not as invalid.
 *
 * With errors the session fails after everything is printed: perf script
 * exits non-zero; perf report says "failed to process sample" but exits 0
 * (it ignores the status), so scripts should test the verdict line.
 */

#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bits.h>
#include <linux/kernel.h>
#include <linux/log2.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <linux/zalloc.h>

#include <internal/lib.h> /* page_size, readn */
#include "auxtrace.h"
#include "data.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "evsel_config.h"
#include "header.h"
#include "parse-events.h"
#include "pmu.h"
#include "pmus.h"
#include "record.h"
#include "sample.h"
#include "session.h"
#include "swaux.h"
#include "tool.h"

#include "swaux_abi.h"

#define SWAUX_REC		sizeof(struct swaux_record)
#define SWAUX_GAP_FLAGS		(PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL | \
				 PERF_AUX_FLAG_COLLISION)
/* Private flag of struct swaux_auxev: a PERF_RECORD_LOST* */
#define SWAUX_EV_LOST		BIT_ULL(63)
/* Private record flag: an ETE model record that starts with an Overflow packet */
#define SWAUX_F_ETE_OVERFLOW	0x8000
/* ETE model: the Timestamp packet is the record CPU << 48 | its sequence number */
#define SWAUX_ETE_SEQ_BITS	48
/* Errors printed in full per perf buffer; the counts are always complete */
#define SWAUX_MAX_REPORTS	10

static_assert(sizeof(struct swaux_record) == 64, "swaux_record is 64 bytes");

#define KiB(x) ((x) * 1024)
#define MiB(x) ((x) * 1024 * 1024)

/* Record side */

struct swaux_recording {
	struct auxtrace_record	itr;
	struct perf_pmu		*pmu;
	struct evlist		*evlist;
	bool			snapshot;
};

static size_t swaux_info_priv_size(struct auxtrace_record *itr __maybe_unused,
				   struct evlist *evlist __maybe_unused)
{
	return SWAUX_AUXTRACE_PRIV_SIZE;
}

static int swaux_info_fill(struct auxtrace_record *itr,
			   struct perf_session *session,
			   struct perf_record_auxtrace_info *auxtrace_info,
			   size_t priv_size)
{
	struct swaux_recording *sr = container_of(itr, struct swaux_recording, itr);

	if (priv_size != SWAUX_AUXTRACE_PRIV_SIZE)
		return -EINVAL;

	if (!evlist__core(session->evlist)->nr_mmaps)
		return -EINVAL;

	auxtrace_info->type = PERF_AUXTRACE_SWAUX;
	auxtrace_info->priv[SWAUX_AUXTRACE_PRIV_PMU_TYPE] = sr->pmu->type;
	auxtrace_info->priv[SWAUX_AUXTRACE_PRIV_SNAPSHOT] = sr->snapshot;

	return 0;
}

static int swaux_set_mmap_pages(struct record_opts *opts)
{
	bool privileged = perf_event_paranoid_check(-1);
	size_t sz;

	if (!opts->auxtrace_mmap_pages) {
		if (opts->auxtrace_snapshot_mode && opts->auxtrace_snapshot_size) {
			sz = round_up(opts->auxtrace_snapshot_size, page_size) / page_size;
			opts->auxtrace_mmap_pages = roundup_pow_of_two(sz);
		} else if (privileged) {
			opts->auxtrace_mmap_pages = MiB(4) / page_size;
		} else {
			opts->auxtrace_mmap_pages = KiB(128) / page_size;
		}
	}
	if (!privileged && opts->mmap_pages == UINT_MAX)
		opts->mmap_pages = KiB(256) / page_size;

	sz = opts->auxtrace_mmap_pages * (size_t)page_size;
	if (sz < KiB(8) || !is_power_of_2(sz)) {
		pr_err("Invalid mmap size for %s: must be at least 8KiB and a power of 2\n",
		       SWAUX_PMU_NAME);
		return -EINVAL;
	}

	if (opts->auxtrace_snapshot_mode) {
		if (!opts->auxtrace_snapshot_size)
			opts->auxtrace_snapshot_size = sz;
		if (opts->auxtrace_snapshot_size > sz) {
			pr_err("Snapshot size %zu must not be greater than AUX area tracing mmap size %zu\n",
			       opts->auxtrace_snapshot_size, sz);
			return -EINVAL;
		}
	}

	return 0;
}

static int swaux_recording_options(struct auxtrace_record *itr,
				   struct evlist *evlist,
				   struct record_opts *opts)
{
	struct swaux_recording *sr = container_of(itr, struct swaux_recording, itr);
	struct perf_cpu_map *cpus = evlist__core(evlist)->user_requested_cpus;
	bool per_cpu = !perf_cpu_map__is_any_cpu_or_is_empty(cpus);
	struct evsel *evsel, *swaux_evsel = NULL, *tracking_evsel;
	struct evsel_config_term *term;
	int err;

	sr->evlist = evlist;
	sr->snapshot = opts->auxtrace_snapshot_mode;
	/*
	 * The first swaux event owns the AUX area of each mmap; further swaux
	 * events (SET_OUTPUT into it by perf, or redirected elsewhere by a
	 * controller) write into the same buffers. All are counting events:
	 * the PMU never samples (PERF_PMU_CAP_NO_INTERRUPT: the kernel refuses
	 * a sampling event), so a period 0 term, applied last, wins over the
	 * default frequency evsel__config() sets and over -c, -F or
	 * period/freq terms.
	 */
	evlist__for_each_entry(evlist, evsel) {
		if (evsel->core.attr.type != sr->pmu->type)
			continue;
		evsel->core.attr.freq = 0;
		evsel->core.attr.sample_period = 0;
		term = zalloc(sizeof(*term));
		if (!term)
			return -ENOMEM;
		term->type = EVSEL__CONFIG_TERM_PERIOD;
		term->val.period = 0;
		list_add_tail(&term->list, &evsel->config_terms);
		evsel__set_sample_bit(evsel, TIME);
		/* The decoder maps PERF_RECORD_AUX to the per-CPU buffer by CPU. */
		if (per_cpu)
			evsel__set_sample_bit(evsel, CPU);
		if (!swaux_evsel) {
			evsel->needs_auxtrace_mmap = true;
			swaux_evsel = evsel;
		}
	}
	if (!swaux_evsel)
		return 0;
	opts->full_auxtrace = true;

	err = swaux_set_mmap_pages(opts);
	if (err)
		return err;

	/* The first AUX event comes first: its fd gets the AUX area mmap. */
	evlist__to_front(evlist, swaux_evsel);

	/* A dummy event tracks comm, fork and mmap of the workload. */
	err = parse_event(evlist, "dummy:u");
	if (err)
		return err;

	tracking_evsel = evlist__last(evlist);
	evlist__set_tracking_event(evlist, tracking_evsel);
	tracking_evsel->core.attr.freq = 0;
	tracking_evsel->core.attr.sample_period = 1;
	evsel__set_sample_bit(tracking_evsel, TIME);
	if (per_cpu)
		evsel__set_sample_bit(tracking_evsel, CPU);

	return 0;
}

static int swaux_parse_snapshot_options(struct auxtrace_record *itr __maybe_unused,
					struct record_opts *opts,
					const char *str)
{
	unsigned long long snapshot_size = 0;
	char *endptr;

	if (str) {
		snapshot_size = strtoull(str, &endptr, 0);
		if (*endptr || snapshot_size > SIZE_MAX)
			return -1;
	}

	opts->auxtrace_snapshot_mode = true;
	opts->auxtrace_snapshot_size = snapshot_size;

	return 0;
}

static int swaux_snapshot_toggle(struct auxtrace_record *itr, bool enable)
{
	struct swaux_recording *sr = container_of(itr, struct swaux_recording, itr);
	struct evsel *evsel;
	int ret;

	evlist__for_each_entry(sr->evlist, evsel) {
		if (evsel->core.attr.type != sr->pmu->type)
			continue;
		/* Stopping the event ends the transaction: head is final. */
		ret = enable ? evsel__enable(evsel) : evsel__disable(evsel);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int swaux_snapshot_start(struct auxtrace_record *itr)
{
	return swaux_snapshot_toggle(itr, false);
}

static int swaux_snapshot_finish(struct auxtrace_record *itr)
{
	return swaux_snapshot_toggle(itr, true);
}

/*
 * In overwrite mode the module advances the head by what it wrote, so head
 * only grows: the newest data is the last buffer size before it.
 */
static int swaux_find_snapshot(struct auxtrace_record *itr __maybe_unused,
			       int idx __maybe_unused, struct auxtrace_mmap *mm,
			       unsigned char *data __maybe_unused,
			       u64 *head, u64 *old)
{
	if (*head - *old > mm->len)
		*old = *head - mm->len;
	return 0;
}

/* auxtrace_record__reference() calls it unconditionally; nothing to add. */
static u64 swaux_reference(struct auxtrace_record *itr __maybe_unused)
{
	return 0;
}

static void swaux_recording_free(struct auxtrace_record *itr)
{
	free(container_of(itr, struct swaux_recording, itr));
}

struct auxtrace_record *swaux_recording_init(struct evlist *evlist, int *err)
{
	struct swaux_recording *sr;
	struct perf_pmu *pmu;
	struct evsel *evsel;
	bool found = false;

	*err = 0;
	if (!evlist)
		return NULL;

	pmu = perf_pmus__find(SWAUX_PMU_NAME);
	if (!pmu)
		return NULL;

	evlist__for_each_entry(evlist, evsel) {
		if (evsel->core.attr.type == pmu->type)
			found = true;
	}
	if (!found)
		return NULL;

	sr = zalloc(sizeof(*sr));
	if (!sr) {
		*err = -ENOMEM;
		return NULL;
	}

	sr->pmu = pmu;
	sr->itr.recording_options = swaux_recording_options;
	sr->itr.info_priv_size = swaux_info_priv_size;
	sr->itr.info_fill = swaux_info_fill;
	sr->itr.free = swaux_recording_free;
	sr->itr.parse_snapshot_options = swaux_parse_snapshot_options;
	sr->itr.snapshot_start = swaux_snapshot_start;
	sr->itr.snapshot_finish = swaux_snapshot_finish;
	sr->itr.find_snapshot = swaux_find_snapshot;
	sr->itr.reference = swaux_reference;
	sr->itr.read_finish = auxtrace_record__read_finish;
	sr->itr.alignment = 0;

	return &sr->itr;
}

/* Decode side */

/* A seq gap between two records of one buf_id in one perf buffer */
struct swaux_gap {
	u64	prev_pos;	/* AUX offset of the record before the gap */
	u64	pos;		/* AUX offset of the record after it */
	u64	prev_seq;
	u64	seq;
	bool	overflow;	/* ETE model: the record after it has an Overflow packet */
};

/* The records of one buf_id in one perf buffer */
struct swaux_stream {
	u32			buf_id;
	u64			records;
	u64			first_seq;
	u64			last_seq;
	u64			last_pos;
	u64			first_pos;
	u64			mismatch;	/* records with SWAUX_F_MISMATCH */
	u64			first_mismatch_seq;
	u64			first_mismatch_pos;
	size_t			nr_gaps;
	size_t			alloc_gaps;
	struct swaux_gap	*gaps;
};

/* A PERF_RECORD_AUX, or a PERF_RECORD_LOST* (flags SWAUX_EV_LOST) */
struct swaux_auxev {
	u32	cpu;
	u32	tid;
	u64	offset;
	u64	size;
	u64	flags;
};

/* One perf AUX buffer: the AUXTRACE events of one mmap idx */
struct swaux_queue {
	u32			idx;
	int			cpu;
	int			tid;
	u64			bytes;
	u64			chunks;
	u64			next_offset;
	u64			discontig;	/* AUXTRACE offset jumps */
	u64			invalid;
	u64			empty;
	u64			first_invalid_pos;
	u64			padding;	/* ETE model: blocks of Ignore packets */
	u64			snapshot_recs;
	size_t			nr_streams;
	struct swaux_stream	*streams;
	/* From the PERF_RECORD_AUX and LOST events, at the end */
	u64			aux_recs;
	u64			aux_flagged;
	u64			aux_overwrite;
	u64			lost;
};

struct swaux {
	struct auxtrace		auxtrace;
	struct perf_session	*session;
	u32			pmu_type;
	bool			snapshot;
	bool			ete_model;	/* cs_etm trace of QEMU's ETE model */
	bool			ete_shared;	/* other sessions share the trace units */
	bool			done;
	size_t			nr_queues;
	struct swaux_queue	*queues;
	size_t			nr_auxevs;
	size_t			alloc_auxevs;
	struct swaux_auxev	*auxevs;
	size_t			nr_cpus_seen;
	bool			*cpu_seen;	/* record cpu field values */
};

static void *swaux_grow(void *arr, size_t *alloc, size_t nr, size_t elem)
{
	size_t n = *alloc ? *alloc * 2 : 16;
	void *p;

	if (nr < *alloc)
		return arr;
	p = realloc(arr, n * elem);
	if (!p)
		return NULL;
	*alloc = n;
	return p;
}

static struct swaux_queue *swaux_queue(struct swaux *sw, u32 idx, int cpu, int tid)
{
	struct swaux_queue *q;
	size_t i;

	for (i = 0; i < sw->nr_queues; i++) {
		if (sw->queues[i].idx == idx)
			return &sw->queues[i];
	}

	q = realloc(sw->queues, (sw->nr_queues + 1) * sizeof(*q));
	if (!q)
		return NULL;
	sw->queues = q;
	q = &sw->queues[sw->nr_queues++];
	memset(q, 0, sizeof(*q));
	q->idx = idx;
	q->cpu = cpu;
	q->tid = tid;
	return q;
}

static struct swaux_stream *swaux_stream(struct swaux_queue *q, u32 buf_id)
{
	struct swaux_stream *s;
	size_t i;

	for (i = 0; i < q->nr_streams; i++) {
		if (q->streams[i].buf_id == buf_id)
			return &q->streams[i];
	}

	s = realloc(q->streams, (q->nr_streams + 1) * sizeof(*s));
	if (!s)
		return NULL;
	q->streams = s;
	s = &q->streams[q->nr_streams++];
	memset(s, 0, sizeof(*s));
	s->buf_id = buf_id;
	return s;
}

static void swaux_record_swap(struct swaux_record *rec)
{
	rec->magic = bswap_32(rec->magic);
	rec->size = bswap_16(rec->size);
	rec->flags = bswap_16(rec->flags);
	rec->seq = bswap_64(rec->seq);
	rec->time = bswap_64(rec->time);
	rec->event_id = bswap_64(rec->event_id);
	rec->cpu = bswap_32(rec->cpu);
	rec->pid = bswap_32(rec->pid);
	rec->tid = bswap_32(rec->tid);
	rec->buf_id = bswap_32(rec->buf_id);
	rec->handle_buf_id = bswap_32(rec->handle_buf_id);
	rec->mismatches = bswap_32(rec->mismatches);
	rec->writer_id = bswap_64(rec->writer_id);
}

static const char *swaux_flags_str(u16 flags, char *buf, size_t sz)
{
	scnprintf(buf, sz, "%s%s%s%s",
		  flags & SWAUX_F_MISMATCH ? "MISMATCH," : "",
		  flags & SWAUX_F_INHERITED ? "INHERITED," : "",
		  flags & SWAUX_F_SNAPSHOT ? "SNAPSHOT," : "",
		  flags ? "" : "-");
	if (flags && buf[0])
		buf[strlen(buf) - 1] = '\0';
	return buf;
}

static void swaux_dump_record(const struct swaux_record *rec, u64 pos)
{
	char fl[64];

	printf(". swaux rec 0x%" PRIx64 ": seq %" PRIu64 " cpu %u pid %u tid %u",
	       pos, (u64)rec->seq, rec->cpu, rec->pid, rec->tid);
	printf(" buf_id %u handle_buf_id %u flags 0x%x [%s]", rec->buf_id,
	       rec->handle_buf_id, rec->flags,
	       swaux_flags_str(rec->flags, fl, sizeof(fl)));
	printf(" time %" PRIu64 " event_id %" PRIu64 " writer_id %" PRIu64 " mismatches %u\n",
	       (u64)rec->time, (u64)rec->event_id, (u64)rec->writer_id,
	       rec->mismatches);
}

static bool swaux_all_byte(const unsigned char *p, size_t len, unsigned char c)
{
	while (len--) {
		if (*p++ != c)
			return false;
	}
	return true;
}

static bool swaux_all_zero(const unsigned char *p, size_t len)
{
	return swaux_all_byte(p, len, 0);
}

static int swaux_account(struct swaux *sw, struct swaux_queue *q,
			 const struct swaux_record *rec, u64 pos)
{
	struct swaux_stream *s = swaux_stream(q, rec->buf_id);

	if (!s)
		return -ENOMEM;

	if (s->records && rec->seq != s->last_seq + 1) {
		struct swaux_gap *g;

		g = swaux_grow(s->gaps, &s->alloc_gaps, s->nr_gaps, sizeof(*g));
		if (!g)
			return -ENOMEM;
		s->gaps = g;
		g = &s->gaps[s->nr_gaps++];
		g->prev_pos = s->last_pos;
		g->pos = pos;
		g->prev_seq = s->last_seq;
		g->seq = rec->seq;
		g->overflow = rec->flags & SWAUX_F_ETE_OVERFLOW;
	}
	if (!s->records) {
		s->first_seq = rec->seq;
		s->first_pos = pos;
	}
	s->last_seq = rec->seq;
	s->last_pos = pos;
	s->records++;

	if (rec->flags & SWAUX_F_MISMATCH) {
		if (!s->mismatch) {
			s->first_mismatch_seq = rec->seq;
			s->first_mismatch_pos = pos;
		}
		s->mismatch++;
	}
	if (rec->flags & SWAUX_F_SNAPSHOT)
		q->snapshot_recs++;

	if (rec->cpu < 65536) {
		if (rec->cpu >= sw->nr_cpus_seen) {
			size_t n = rec->cpu + 1;
			bool *p = realloc(sw->cpu_seen, n * sizeof(*p));

			if (!p)
				return -ENOMEM;
			memset(p + sw->nr_cpus_seen, 0, (n - sw->nr_cpus_seen) * sizeof(*p));
			sw->cpu_seen = p;
			sw->nr_cpus_seen = n;
		}
		sw->cpu_seen[rec->cpu] = true;
	}
	return 0;
}

/*
 * One 64-byte record of QEMU's ETE model into @rec: 1, a block of Ignore
 * packets (padding): 0, anything else: -1.
 */
static int swaux_ete_parse(const unsigned char *p, struct swaux_record *rec)
{
	static const unsigned char head[] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80,	/* A-Sync */
		0x01, 0x00,				/* TraceInfo, no sections */
		0x04,					/* Trace On */
		0x02,					/* Timestamp */
	};
	const unsigned char *end = p + SWAUX_REC;
	u64 ts = 0;
	unsigned int i;

	if (swaux_all_byte(p, SWAUX_REC, 0x70))
		return 0;
	memset(rec, 0, sizeof(*rec));
	if (p[0] == 0x00 && p[1] == 0x05) {	/* Overflow */
		rec->flags |= SWAUX_F_ETE_OVERFLOW;
		p += 2;
	}
	if (memcmp(p, head, sizeof(head)))
		return -1;
	p += sizeof(head);
	for (i = 0; i < 9; i++, p++) {		/* 7 bits a byte, the 9th has 8 */
		ts |= (u64)(i < 8 ? *p & 0x7f : *p) << (7 * i);
		if (i == 8 || !(*p & 0x80)) {
			p++;
			break;
		}
	}
	/* Context with a context ID (C bit) and no VMID, then a long address */
	if (p + 6 + 9 > end || p[0] != 0x81 || (p[1] & 0xc0) != 0x80 || p[6] != 0x9d)
		return -1;
	if (!swaux_all_byte(p + 15, end - (p + 15), 0x70))
		return -1;
	rec->pid = p[2] | p[3] << 8 | p[4] << 16 | (u32)p[5] << 24;
	rec->tid = rec->pid;
	rec->seq = ts & GENMASK_ULL(SWAUX_ETE_SEQ_BITS - 1, 0);
	rec->cpu = ts >> SWAUX_ETE_SEQ_BITS;
	rec->buf_id = rec->cpu;
	rec->magic = SWAUX_MAGIC;
	rec->size = SWAUX_REC;
	return 1;
}

static void swaux_invalid(struct swaux_queue *q, u64 pos)
{
	if (!q->invalid)
		q->first_invalid_pos = pos;
	q->invalid++;
}

/*
 * The last block of a chunk that ends inside it: padding (0x70) up to
 * where the AUX data ended, then the zeroes perf pads PERF_RECORD_AUXTRACE
 * with (to 8 bytes). The TRBE driver pads to odd lengths when the buffer
 * is nearly full (__trbe_normal_offset()); the next chunk starts there.
 */
static bool swaux_ete_tail_padding(const unsigned char *p)
{
	size_t i = 0;

	while (i < SWAUX_REC && p[i] == 0x70)
		i++;
	return i && SWAUX_REC - i < 8 && swaux_all_zero(p + i, SWAUX_REC - i);
}

static int swaux_scan_ete(struct swaux *sw, struct swaux_queue *q,
			  const unsigned char *data, size_t size, u64 offset)
{
	size_t pos = 0;
	int err;

	/*
	 * The TRBE writes 64-byte aligned records: so do the model and the
	 * driver. A misaligned start may only be padding.
	 */
	if (offset % SWAUX_REC) {
		pos = min(size, SWAUX_REC - offset % SWAUX_REC);
		if (!swaux_all_byte(data, pos, 0x70) && !swaux_all_zero(data, pos)) {
			swaux_invalid(q, offset);
			if (dump_trace)
				printf(". swaux ete 0x%" PRIx64 ": invalid: not 64-byte aligned\n",
				       offset);
		}
	}
	for (; pos + SWAUX_REC <= size; pos += SWAUX_REC) {
		struct swaux_record rec;

		/* Never written (snapshot mode: not an error), as the native path */
		if (swaux_all_zero(data + pos, SWAUX_REC)) {
			q->empty++;
			continue;
		}
		switch (swaux_ete_parse(data + pos, &rec)) {
		case 1:
			if (dump_trace)
				printf(". swaux ete 0x%" PRIx64 ": cpu %u seq %" PRIu64
				       " pid %u%s\n", offset + pos, rec.cpu, (u64)rec.seq, rec.pid,
				       rec.flags & SWAUX_F_ETE_OVERFLOW ? " overflow" : "");
			err = swaux_account(sw, q, &rec, offset + pos);
			if (err)
				return err;
			break;
		case 0:
			q->padding++;
			break;
		default:
			if (pos + SWAUX_REC == size &&
			    swaux_ete_tail_padding(data + pos)) {
				q->padding++;
				break;
			}
			swaux_invalid(q, offset + pos);
			if (dump_trace)
				printf(". swaux ete 0x%" PRIx64 ": invalid\n", offset + pos);
		}
	}
	if (pos < size && !swaux_all_byte(data + pos, size - pos, 0) &&
	    !swaux_all_byte(data + pos, size - pos, 0x70))
		swaux_invalid(q, offset + pos);
	return 0;
}

static int swaux_scan(struct swaux *sw, struct swaux_queue *q,
		      const unsigned char *data, size_t size, u64 offset)
{
	bool needs_swap = sw->session->header.needs_swap;
	size_t pos;
	int err;

	if (dump_trace)
		printf(". ... swaux data: size %zu bytes idx %u cpu %d tid %d offset 0x%"
		       PRIx64 "\n", size, q->idx, q->cpu, q->tid, offset);

	if (q->chunks && offset != q->next_offset)
		q->discontig++;
	q->chunks++;
	q->next_offset = offset + size;
	q->bytes += size;

	if (sw->ete_model)
		return swaux_scan_ete(sw, q, data, size, offset);

	for (pos = 0; pos + SWAUX_REC <= size; pos += SWAUX_REC) {
		struct swaux_record rec;

		memcpy(&rec, data + pos, sizeof(rec));
		if (needs_swap)
			swaux_record_swap(&rec);

		if (rec.magic == SWAUX_MAGIC && rec.size == SWAUX_REC) {
			if (dump_trace)
				swaux_dump_record(&rec, offset + pos);
			err = swaux_account(sw, q, &rec, offset + pos);
			if (err)
				return err;
			continue;
		}

		if (swaux_all_zero(data + pos, SWAUX_REC)) {
			q->empty++;
			if (dump_trace)
				printf(". swaux rec 0x%" PRIx64 ": empty\n", offset + pos);
			continue;
		}
		if (!q->invalid)
			q->first_invalid_pos = offset + pos;
		q->invalid++;
		if (dump_trace)
			printf(". swaux rec 0x%" PRIx64 ": invalid: magic 0x%x size %u\n",
			       offset + pos, rec.magic, rec.size);
	}

	/* Trailing bytes: AUXTRACE padding is zero, anything else is bad. */
	if (pos < size && !swaux_all_zero(data + pos, size - pos)) {
		if (!q->invalid)
			q->first_invalid_pos = offset + pos;
		q->invalid++;
		if (dump_trace)
			printf(". swaux rec 0x%" PRIx64 ": invalid: %zu trailing bytes\n",
			       offset + pos, size - pos);
	}

	return 0;
}

static int swaux_process_event(struct perf_session *session,
			       union perf_event *event,
			       struct perf_sample *sample,
			       const struct perf_tool *tool __maybe_unused)
{
	struct swaux *sw = container_of(session->auxtrace, struct swaux, auxtrace);
	struct swaux_auxev *ev;

	switch (event->header.type) {
	case PERF_RECORD_AUX:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		break;
	default:
		return 0;
	}

	ev = swaux_grow(sw->auxevs, &sw->alloc_auxevs, sw->nr_auxevs, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	sw->auxevs = ev;
	ev = &sw->auxevs[sw->nr_auxevs++];
	memset(ev, 0, sizeof(*ev));
	ev->cpu = sample->cpu;
	ev->tid = sample->tid;
	if (event->header.type == PERF_RECORD_AUX) {
		ev->offset = event->aux.aux_offset;
		ev->size = event->aux.aux_size;
		ev->flags = event->aux.flags;
	} else {
		ev->flags = SWAUX_EV_LOST;
	}
	return 0;
}

static int swaux_process_auxtrace_event(struct perf_session *session,
					union perf_event *event,
					const struct perf_tool *tool __maybe_unused)
{
	struct swaux *sw = container_of(session->auxtrace, struct swaux, auxtrace);
	int fd = perf_data__fd(session->data);
	u64 size = event->auxtrace.size;
	struct swaux_queue *q;
	ssize_t n;
	void *data;
	int err;

	if (size > SSIZE_MAX)
		return -EINVAL;

	q = swaux_queue(sw, event->auxtrace.idx, event->auxtrace.cpu,
			event->auxtrace.tid);
	if (!q)
		return -ENOMEM;

	data = malloc(size ?: 1);
	if (!data)
		return -ENOMEM;

	/* perf_session__process_user_event() put fd at the data */
	n = readn(fd, data, size);
	if (n != (ssize_t)size) {
		free(data);
		return n < 0 ? -errno : -EINVAL;
	}

	err = swaux_scan(sw, q, data, size, event->auxtrace.offset);
	free(data);
	return err;
}

static bool swaux_ev_matches(const struct swaux_queue *q, const struct swaux_auxev *ev)
{
	if (q->cpu != -1)
		return ev->cpu == (u32)q->cpu;
	return ev->tid == (u32)q->tid;
}

/* Attach the PERF_RECORD_AUX and LOST events to their perf buffers. */
static void swaux_match_auxevs(struct swaux *sw, u64 *unmatched)
{
	size_t i, j;

	for (i = 0; i < sw->nr_auxevs; i++) {
		const struct swaux_auxev *ev = &sw->auxevs[i];
		bool matched = false;

		for (j = 0; j < sw->nr_queues; j++) {
			struct swaux_queue *q = &sw->queues[j];

			if (ev->flags & SWAUX_EV_LOST) {
				/* A lost event of unknown CPU may hide anything. */
				if (ev->cpu == (u32)-1 || swaux_ev_matches(q, ev)) {
					q->lost++;
					matched = true;
				}
				continue;
			}
			if (!swaux_ev_matches(q, ev))
				continue;
			q->aux_recs++;
			if (ev->flags & SWAUX_GAP_FLAGS)
				q->aux_flagged++;
			if (ev->flags & PERF_AUX_FLAG_OVERWRITE)
				q->aux_overwrite++;
			matched = true;
			break;
		}
		if (!matched && !(ev->flags & SWAUX_EV_LOST))
			(*unmatched)++;
	}
}

/* Why a gap is acceptable, or NULL */
static const char *swaux_gap_reason(struct swaux *sw, const struct swaux_queue *q,
				    const struct swaux_gap *g)
{
	size_t i;

	if (sw->snapshot || q->snapshot_recs || q->aux_overwrite)
		return "snapshot";

	if (g->overflow)
		return "overflow-packet";

	for (i = 0; i < sw->nr_auxevs; i++) {
		const struct swaux_auxev *ev = &sw->auxevs[i];
		/*
		 * The ETE model reports its own losses with Overflow packets:
		 * of perf's flags only TRUNCATED (perf had no room) explains a
		 * gap. The TRBE driver sets COLLISION at every fill-mode wrap.
		 */
		u64 gap_flags = sw->ete_model ? PERF_AUX_FLAG_TRUNCATED : SWAUX_GAP_FLAGS;

		if (ev->flags & SWAUX_EV_LOST || !(ev->flags & gap_flags) ||
		    !swaux_ev_matches(q, ev))
			continue;
		/* The transaction [offset, offset + size] touches the gap. */
		if (ev->offset <= g->pos && ev->offset + ev->size >= g->prev_pos)
			return "aux-flag";
	}

	/*
	 * The ETE model numbers a CPU's records, not a session's: when other
	 * sessions trace on the same CPU, the records they got between two
	 * of this buffer's transactions leave a gap where a transaction
	 * begins. Inside a transaction a gap is still an error.
	 */
	for (i = 0; sw->ete_shared && i < sw->nr_auxevs; i++) {
		const struct swaux_auxev *ev = &sw->auxevs[i];

		if (!(ev->flags & SWAUX_EV_LOST) && swaux_ev_matches(q, ev) &&
		    ev->offset > g->prev_pos && ev->offset <= g->pos)
			return "shared-cpu";
	}

	if (q->lost)
		return "lost";

	return NULL;
}

static void swaux_error_prefix(const struct swaux_queue *q, u32 buf_id)
{
	printf("swaux: error: idx=%u cpu=%d buf_id=%u: ", q->idx, q->cpu, buf_id);
}

static int swaux_queue_cmp(const void *a, const void *b)
{
	const struct swaux_queue *qa = a, *qb = b;

	return qa->idx < qb->idx ? -1 : qa->idx > qb->idx;
}

static u64 swaux_report(struct swaux *sw)
{
	u64 t_bytes = 0, t_recs = 0, t_flagged = 0, t_unflagged = 0, t_misplaced = 0;
	u64 t_invalid = 0, unmatched = 0, t_auxevs = 0, errors;
	size_t i, j, k;

	qsort(sw->queues, sw->nr_queues, sizeof(*sw->queues), swaux_queue_cmp);
	swaux_match_auxevs(sw, &unmatched);

	for (i = 0; i < sw->nr_queues; i++) {
		struct swaux_queue *q = &sw->queues[i];
		struct swaux_stream *p = NULL;
		u64 recs = 0, misplaced, flagged = 0, unflagged = 0, invalid;
		bool snapshot = sw->snapshot || q->snapshot_recs || q->aux_overwrite;
		unsigned int reported = 0;

		/* The buffer's own buf_id: the one most records carry */
		for (j = 0; j < q->nr_streams; j++) {
			recs += q->streams[j].records;
			if (!p || q->streams[j].records > p->records)
				p = &q->streams[j];
		}

		misplaced = p ? recs - p->records + p->mismatch : 0;
		invalid = q->invalid + (snapshot ? 0 : q->empty);

		for (k = 0; p && k < p->nr_gaps; k++) {
			const struct swaux_gap *g = &p->gaps[k];
			const char *why = swaux_gap_reason(sw, q, g);

			if (why) {
				flagged++;
				continue;
			}
			unflagged++;
			if (reported++ >= SWAUX_MAX_REPORTS)
				continue;
			swaux_error_prefix(q, p->buf_id);
			printf("unflagged gap seq %" PRIu64 " -> %" PRIu64 " at aux offset 0x%"
			       PRIx64 "\n", g->prev_seq, g->seq, g->pos);
		}
		for (j = 0; p && j < q->nr_streams; j++) {
			const struct swaux_stream *s = &q->streams[j];

			if (s != p && reported++ < SWAUX_MAX_REPORTS) {
				swaux_error_prefix(q, p->buf_id);
				printf("misplaced: %" PRIu64 " records of buf_id %u, seq %" PRIu64,
				       s->records, s->buf_id, s->first_seq);
				printf("..%" PRIu64 " from aux offset 0x%" PRIx64 "\n",
				       s->last_seq, s->first_pos);
			}
			if (s->mismatch && reported++ < SWAUX_MAX_REPORTS) {
				swaux_error_prefix(q, p->buf_id);
				printf("misplaced: %" PRIu64 " MISMATCH records of buf_id %u",
				       s->mismatch, s->buf_id);
				printf(", first seq %" PRIu64 " at aux offset 0x%" PRIx64 "\n",
				       s->first_mismatch_seq, s->first_mismatch_pos);
			}
		}
		if (invalid && reported++ < SWAUX_MAX_REPORTS) {
			swaux_error_prefix(q, p ? p->buf_id : 0);
			printf("%" PRIu64 " invalid records (%" PRIu64 " empty)",
			       invalid, q->empty);
			printf(", first at aux offset 0x%" PRIx64 "\n",
			       q->invalid ? q->first_invalid_pos : 0);
		}

		printf("swaux: buffer idx=%u cpu=%d tid=%d buf_id=%u bytes=%" PRIu64,
		       q->idx, q->cpu, q->tid, p ? p->buf_id : 0, q->bytes);
		printf(" records=%" PRIu64 " first_seq=%" PRIu64 " last_seq=%" PRIu64,
		       recs, p ? p->first_seq : 0, p ? p->last_seq : 0);
		printf(" gaps_flagged=%" PRIu64 " gaps_unflagged=%" PRIu64, flagged, unflagged);
		printf(" misplaced=%" PRIu64 " invalid=%" PRIu64 " empty=%" PRIu64,
		       misplaced, invalid, q->empty);
		printf(" aux_records=%" PRIu64 " aux_flagged=%" PRIu64 " lost=%" PRIu64,
		       q->aux_recs, q->aux_flagged, q->lost);
		printf(" discontig=%" PRIu64 " mode=%s", q->discontig,
		       snapshot ? "snapshot" : "full");
		if (sw->ete_model)
			printf(" format=ete-model padding=%" PRIu64, q->padding);
		printf("\n");

		t_bytes += q->bytes;
		t_recs += recs;
		t_flagged += flagged;
		t_unflagged += unflagged;
		t_misplaced += misplaced;
		t_invalid += invalid;
	}

	printf("swaux: record cpus:");
	for (i = 0; i < sw->nr_cpus_seen; i++) {
		if (sw->cpu_seen[i])
			printf(" %zu", i);
	}
	printf("\n");

	for (i = 0; i < sw->nr_auxevs; i++) {
		if (!(sw->auxevs[i].flags & SWAUX_EV_LOST))
			t_auxevs++;
	}

	errors = t_unflagged + t_misplaced + t_invalid;
	/* PERF_RECORD_AUX says data was written: its absence is an error */
	if (t_auxevs && !t_bytes) {
		printf("swaux: error: %" PRIu64 " PERF_RECORD_AUX records but no AUX data\n",
		       t_auxevs);
		errors++;
	}
	printf("swaux: total buffers=%zu bytes=%" PRIu64 " records=%" PRIu64,
	       sw->nr_queues, t_bytes, t_recs);
	printf(" gaps_flagged=%" PRIu64 " gaps_unflagged=%" PRIu64, t_flagged, t_unflagged);
	printf(" misplaced=%" PRIu64 " invalid=%" PRIu64 " aux_records=%" PRIu64,
	       t_misplaced, t_invalid, t_auxevs);
	printf(" aux_unmatched=%" PRIu64 "\n", unmatched);
	if (errors)
		printf("swaux: verdict: %" PRIu64 " errors\n", errors);
	else if (!t_bytes)
		printf("swaux: verdict: no AUX data\n");
	else
		printf("swaux: verdict: ok\n");
	fflush(stdout);

	return errors;
}

static int swaux_flush(struct perf_session *session,
		       const struct perf_tool *tool __maybe_unused)
{
	struct swaux *sw = container_of(session->auxtrace, struct swaux, auxtrace);

	if (sw->done)
		return 0;
	sw->done = true;

	/*
	 * A command that does not decode AUX data (no itrace options, e.g.
	 * perf data convert) never hands the AUXTRACE data to us: nothing
	 * was checked, so there is no verdict to give.
	 */
	if (!session->itrace_synth_opts || session->itrace_synth_opts->dont_decode) {
		pr_debug("swaux: AUX data not decoded by this command, no verdict\n");
		return 0;
	}

	if (swaux_report(sw)) {
		pr_err("swaux: the AUX data has errors, see the swaux: lines\n");
		return -EINVAL;
	}
	return 0;
}

static void swaux_free_events(struct perf_session *session __maybe_unused)
{
}

static void swaux_free(struct perf_session *session)
{
	struct swaux *sw = container_of(session->auxtrace, struct swaux, auxtrace);
	size_t i, j;

	for (i = 0; i < sw->nr_queues; i++) {
		for (j = 0; j < sw->queues[i].nr_streams; j++)
			free(sw->queues[i].streams[j].gaps);
		free(sw->queues[i].streams);
	}
	free(sw->queues);
	free(sw->auxevs);
	free(sw->cpu_seen);
	session->auxtrace = NULL;
	free(sw);
}

static bool swaux_evsel_is_auxtrace(struct perf_session *session,
				    struct evsel *evsel)
{
	struct swaux *sw = container_of(session->auxtrace, struct swaux, auxtrace);

	return evsel->core.attr.type == sw->pmu_type;
}

/* PERF_SWAUX_ETE_MODEL=shared: other sessions traced on the same CPUs */
static bool swaux_ete_model_shared(void)
{
	const char *v = getenv("PERF_SWAUX_ETE_MODEL");

	return v && !strcmp(v, "shared");
}

static int swaux_session_init(struct perf_session *session, u32 pmu_type,
			      bool snapshot, bool ete_model)
{
	struct swaux *sw;

	sw = zalloc(sizeof(*sw));
	if (!sw)
		return -ENOMEM;

	sw->session = session;
	sw->pmu_type = pmu_type;
	sw->snapshot = snapshot;
	sw->ete_model = ete_model;
	sw->ete_shared = ete_model && swaux_ete_model_shared();

	sw->auxtrace.process_event = swaux_process_event;
	sw->auxtrace.process_auxtrace_event = swaux_process_auxtrace_event;
	sw->auxtrace.flush_events = swaux_flush;
	sw->auxtrace.free_events = swaux_free_events;
	sw->auxtrace.free = swaux_free;
	sw->auxtrace.evsel_is_auxtrace = swaux_evsel_is_auxtrace;
	session->auxtrace = &sw->auxtrace;

	if (dump_trace)
		printf("  PMU Type           %u\n  Snapshot           %d%s\n",
		       sw->pmu_type, sw->snapshot,
		       ete_model ? "\n  Format             ETE model (PERF_SWAUX_ETE_MODEL)" : "");

	return 0;
}

int swaux_process_auxtrace_info(union perf_event *event,
				struct perf_session *session)
{
	struct perf_record_auxtrace_info *auxtrace_info = &event->auxtrace_info;

	if (auxtrace_info->header.size < SWAUX_AUXTRACE_PRIV_SIZE +
					 sizeof(struct perf_record_auxtrace_info))
		return -EINVAL;

	return swaux_session_init(session, auxtrace_info->priv[SWAUX_AUXTRACE_PRIV_PMU_TYPE],
				  auxtrace_info->priv[SWAUX_AUXTRACE_PRIV_SNAPSHOT], false);
}

bool swaux_ete_model(void)
{
	const char *v = getenv("PERF_SWAUX_ETE_MODEL");

	return v && *v && strcmp(v, "0");
}

int swaux_process_ete_model_info(union perf_event *event,
				 struct perf_session *session)
{
	struct perf_record_auxtrace_info *auxtrace_info = &event->auxtrace_info;

	/*
	 * cs_etm's global header (util/cs-etm.h): CS_HEADER_VERSION,
	 * CS_PMU_TYPE_CPUS (the PMU type in the upper 32 bits), CS_ETM_SNAPSHOT.
	 */
	if (auxtrace_info->header.size < 3 * sizeof(u64) + sizeof(*auxtrace_info))
		return -EINVAL;

	return swaux_session_init(session, auxtrace_info->priv[1] >> 32,
				  auxtrace_info->priv[2], true);
}
