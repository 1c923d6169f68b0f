/* SPDX-License-Identifier: GPL-2.0 */
/*
 * swaux: the software AUX PMU of the perf_events selftests
 * (tools/testing/selftests/perf_events/test_modules/perf_swaux.c).
 */

#ifndef INCLUDE__PERF_SWAUX_H__
#define INCLUDE__PERF_SWAUX_H__

#include <stdbool.h>
#include <linux/types.h>

struct auxtrace_record;
struct evlist;
struct perf_session;
union perf_event;

#define SWAUX_AUXTRACE_PRIV_PMU_TYPE	0
#define SWAUX_AUXTRACE_PRIV_SNAPSHOT	1
#define SWAUX_AUXTRACE_PRIV_MAX		2
#define SWAUX_AUXTRACE_PRIV_SIZE	(SWAUX_AUXTRACE_PRIV_MAX * sizeof(u64))

/*
 * swaux_recording_init - the AUX area recorder for a swaux event in @evlist.
 * Returns NULL with *err == 0 when @evlist has no swaux event.
 */
struct auxtrace_record *swaux_recording_init(struct evlist *evlist, int *err);

int swaux_process_auxtrace_info(union perf_event *event,
				struct perf_session *session);

/*
 * swaux_ete_model - PERF_SWAUX_ETE_MODEL is set: a cs_etm recording is
 * judged by swaux_process_ete_model_info() (the checks above on the records
 * of QEMU's ETE model) instead of being decoded with OpenCSD. The model
 * numbers each CPU's records: with PERF_SWAUX_ETE_MODEL=shared (other
 * sessions traced on the same CPUs) a sequence gap where a transaction
 * begins is not an error.
 */
bool swaux_ete_model(void);
int swaux_process_ete_model_info(union perf_event *event,
				 struct perf_session *session);

#endif
