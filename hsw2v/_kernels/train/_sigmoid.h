/* The training module's sigmoid table (train/_sigmoid.pxd declares it).
 *
 * One table per translation unit that trains (the shipped hsw2v._kernels._inner of each CPU
 * level, and the benchmark-only walks module when it is built): ``static`` storage here,
 * filled once by that module at import (hsw2v_walk_sigmoid_init), then only read, by every
 * thread. */
#ifndef HSW2V_SIGMOID_H
#define HSW2V_SIGMOID_H

#include "../math/_vec.h"

static float hsw2v_walk_sigmoid_values[HSW2V_SIGMOID_VALUES];
static hsw2v_sigmoid_table hsw2v_walk_sigmoid;

static inline void hsw2v_walk_sigmoid_init(void) {
    hsw2v_sigmoid_table_init(&hsw2v_walk_sigmoid, hsw2v_walk_sigmoid_values);
}

#endif
