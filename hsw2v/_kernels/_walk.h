/* The training walks' module-level state and hints (_inner_loops.pxd declares them).
 *
 * One sigmoid table per translation unit that trains (the shipped hsw2v._kernels._inner of each CPU
 * level, and the benchmark-only walks module when it is built): ``static`` storage here,
 * filled once by that module at import (hsw2v_walk_sigmoid_init), then only read, by every
 * thread. The prefetch hint asks for a row's cache line ahead of a write (no effect on
 * results). */
#ifndef HSW2V_WALK_H
#define HSW2V_WALK_H

#include "_vec.h"

static float hsw2v_walk_sigmoid_values[HSW2V_SIGMOID_VALUES];
static hsw2v_sigmoid_table hsw2v_walk_sigmoid;

static inline void hsw2v_walk_sigmoid_init(void) {
    hsw2v_sigmoid_table_init(&hsw2v_walk_sigmoid, hsw2v_walk_sigmoid_values);
}

#if defined(__GNUC__) || defined(__clang__)
#define HSW2V_PREFETCH(p) __builtin_prefetch((const void *)(p), 1, 3)
#else
#define HSW2V_PREFETCH(p) ((void)0)
#endif

#endif
