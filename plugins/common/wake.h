/* How both threads engines (dp's replicas, mp's stages) start their
 * workers and wake them once per step: the calling thread raises `go`
 * once every worker thread exists, moves `gen` once per step, and raises
 * `quit` to send them home; each worker waits for a generation it has not
 * seen. One mutex and condition variable, which mp's slots share. */
#ifndef DLB_WAKE_H
#define DLB_WAKE_H

#include <pthread.h>
#include <stdint.h>

struct dlb_wake {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    uint64_t gen;   /* moves once per step */
    int go, quit;   /* go: every worker thread exists */
};

static inline void dlb_wake_init(struct dlb_wake *k)
{
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    k->gen = 0;
    k->go = k->quit = 0;
}

static inline void dlb_wake_destroy(struct dlb_wake *k)
{
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
}

/* 0 go, 1 the next generation, 2 quit: under the lock, every waiter
 * woken. */
static inline void dlb_wake_raise_(struct dlb_wake *k, int what)
{
    pthread_mutex_lock(&k->mu);
    if (what == 0)
        k->go = 1;
    else if (what == 1)
        k->gen++;
    else
        k->quit = 1;
    pthread_cond_broadcast(&k->cv);
    pthread_mutex_unlock(&k->mu);
}

static inline void dlb_wake_go(struct dlb_wake *k) { dlb_wake_raise_(k, 0); }
static inline void dlb_wake_next(struct dlb_wake *k) { dlb_wake_raise_(k, 1); }
static inline void dlb_wake_quit(struct dlb_wake *k) { dlb_wake_raise_(k, 2); }

/* A worker's first wait: until every worker thread exists (when one
 * cannot be started the others leave instead). 0 when told to quit. */
static inline int dlb_wake_wait_go(struct dlb_wake *k)
{
    pthread_mutex_lock(&k->mu);
    while (!k->go && !k->quit)
        pthread_cond_wait(&k->cv, &k->mu);
    int quit = k->quit;
    pthread_mutex_unlock(&k->mu);
    return !quit;
}

/* Until a generation after *seen (then *seen is it); 0 when told to
 * quit. */
static inline int dlb_wake_wait_next(struct dlb_wake *k, uint64_t *seen)
{
    pthread_mutex_lock(&k->mu);
    while (k->gen == *seen && !k->quit)
        pthread_cond_wait(&k->cv, &k->mu);
    *seen = k->gen;
    int quit = k->quit;
    pthread_mutex_unlock(&k->mu);
    return !quit;
}

#endif
