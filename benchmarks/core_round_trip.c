/* A cache line's round trip between the first two CPUs this process may run on.
 *
 * Two threads, pinned one to each CPU, take turns writing one shared 64-byte-aligned counter:
 * each waits until the other has written, then writes. Prints the mean nanoseconds of one
 * round trip (two hand-overs of the line). Usage: core_round_trip [ROUND_TRIPS]. Exit status
 * 2 when fewer than two CPUs are available. Built and run by benchmarks/placement.py. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Atomic long turn __attribute__((aligned(64)));
static long round_trips = 200000;
static int cpus[2];

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *answer(void *unused) {
    (void)unused;
    pin(cpus[1]);
    for (long i = 0; i < round_trips; i++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&turn, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv) {
    cpu_set_t allowed;
    int found = 0;
    pthread_t other;
    struct timespec t0, t1;
    if (argc > 1)
        round_trips = atol(argv[1]);
    sched_getaffinity(0, sizeof allowed, &allowed);
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[found++] = c;
    if (found < 2 || round_trips < 1)
        return 2;
    pin(cpus[0]);
    pthread_create(&other, NULL, answer, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < round_trips; i++) {
        atomic_store_explicit(&turn, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&turn, memory_order_acquire) != 2 * i + 2)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    pthread_join(other, NULL);
    printf("%.1f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / round_trips);
    return 0;
}
