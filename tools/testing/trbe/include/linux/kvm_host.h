/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/kvm_host.h>: same include guard, contents come from the shims. */
#ifndef __KVM_HOST_H
#define __KVM_HOST_H

#include "trbe_shim.h"

#endif /* __KVM_HOST_H */
