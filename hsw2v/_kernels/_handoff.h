/* The GIL handed back to a training thread as soon as it asks (hsw2v._kernels._inner).
 *
 * A worker thread trains a job without the GIL and must take it back to return; the
 * producer thread meanwhile maps the next documents to ids holding the GIL (dictionary
 * lookups). CPython hands the GIL over only after a waiter has waited a switch interval
 * (5 ms) and the holder reaches the interpreter's loop, which the producer's compiled
 * loop never does: a worker could wait out a whole batch. So a worker counts itself as
 * waiting before it takes the GIL back (hsw2v_gil_waiting), and the producer's loop, seeing
 * the count (hsw2v_gil_wanted), lets go of the GIL until every waiting worker has it
 * (hsw2v_gil_taken). Results never depend on it: only when each thread runs.
 */
#ifndef HSW2V_HANDOFF_H
#define HSW2V_HANDOFF_H

#ifdef _MSC_VER
#include <intrin.h>
static volatile long hsw2v_gil_waiters = 0;
static void hsw2v_gil_waiting(void) { _InterlockedIncrement(&hsw2v_gil_waiters); }
static void hsw2v_gil_taken(void) { _InterlockedDecrement(&hsw2v_gil_waiters); }
static int hsw2v_gil_wanted(void) { return _InterlockedCompareExchange(&hsw2v_gil_waiters, 0, 0) > 0; }
static void hsw2v_gil_pause(void) { _mm_pause(); }
#else
#include <sched.h>
static long hsw2v_gil_waiters = 0;
static void hsw2v_gil_waiting(void) { __atomic_add_fetch(&hsw2v_gil_waiters, 1, __ATOMIC_SEQ_CST); }
static void hsw2v_gil_taken(void) { __atomic_sub_fetch(&hsw2v_gil_waiters, 1, __ATOMIC_SEQ_CST); }
static int hsw2v_gil_wanted(void) { return __atomic_load_n(&hsw2v_gil_waiters, __ATOMIC_SEQ_CST) > 0; }
static void hsw2v_gil_pause(void) { sched_yield(); }
#endif

#endif
