/* Unit tests of core/util/apart.c: work run in a forked copy of the
 * process gives back its status and message; what it allocates, touches
 * or changes stays out of this process; a copy killed by a signal or
 * ended without an answer is an error that says so; and the work runs
 * apart only while the process has a single thread. */
#include "util/apart.h"

#include "check.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOUCHED ((size_t)96 << 20)

static int changed_in_copy;

static dlb_status fails(void *ctx, struct dlb_error *err)
{
    return dlb_errorf(err, DLB_ERR_INPUT, "value %d is out of range",
                      *(int *)ctx);
}

/* Allocates and touches 96 MiB, and changes a global: none of it may
 * show in the parent. */
static dlb_status grows(void *ctx, struct dlb_error *err)
{
    (void)ctx;
    (void)err;
    volatile unsigned char *p = malloc(TOUCHED);
    if (!p)
        return DLB_ERR_NOMEM;
    for (size_t i = 0; i < TOUCHED; i += 4096)
        p[i] = (unsigned char)i;
    changed_in_copy = 1;
    return DLB_OK; /* not freed: the copy exits */
}

static dlb_status killed(void *ctx, struct dlb_error *err)
{
    (void)ctx;
    (void)err;
    kill(getpid(), SIGKILL);
    return DLB_OK;
}

static dlb_status exits(void *ctx, struct dlb_error *err)
{
    (void)ctx;
    (void)err;
    _exit(3);
}

/* The kernel's high-water mark of this process, KiB. */
static long hwm_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *waits(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    struct dlb_error err = {""};
    int value = 7;

    CHECK(dlb_apart_possible());
    CHECK(dlb_apart_run(fails, &value, &err) == DLB_ERR_INPUT);
    CHECK(strcmp(err.msg, "value 7 is out of range") == 0);

    long before = hwm_kib();
    err.msg[0] = '\0';
    CHECK(dlb_apart_run(grows, NULL, &err) == DLB_OK);
    CHECK(err.msg[0] == '\0');
    CHECK(changed_in_copy == 0);
    /* 96 MiB touched in the copy; this process's mark moved by far less */
    CHECK(before > 0 && hwm_kib() - before < 16 * 1024);

    CHECK(dlb_apart_run(killed, NULL, &err) == DLB_ERR_RUNTIME);
    CHECK(strstr(err.msg, "killed by signal 9") != NULL);
    CHECK(dlb_apart_run(exits, NULL, &err) == DLB_ERR_RUNTIME);
    CHECK(strstr(err.msg, "without an answer (exit status 3)") != NULL);

    /* another thread: a fork would copy this one alone */
    pthread_t t;
    pthread_mutex_lock(&lock);
    CHECK(pthread_create(&t, NULL, waits, NULL) == 0);
    CHECK(!dlb_apart_possible());
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    CHECK(dlb_apart_possible());
    return check_exit();
}
