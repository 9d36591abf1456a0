/* The amp plugin's gradient scaler against hand-worked sequences, as
 * torch.cuda.amp.GradScaler behaves:
 * - an overflowing step is skipped and halves the scale (backoff 0.5), and
 *   restarts the count of clean steps;
 * - growth_interval clean steps in a row double the scale (growth 2);
 * - static scaling keeps its scale but still skips overflowing steps;
 * - none scales by 1 and applies every step;
 * - reset returns to the initial state (the accuracy run starts afresh). */
#include "check.h"

#include <math.h>

#include "amp_scaler.h"

/* Feed `seq` ('o' overflow, '.' clean); check each step's apply and the
 * scale after it. */
static void run(struct dlb_amp_scaler *s, const char *seq, const int *apply,
                const float *scale)
{
    for (int i = 0; seq[i]; i++) {
        int a = dlb_amp_scaler_update(s, seq[i] == 'o');
        CHECK(a == apply[i]);
        CHECK(dlb_amp_scaler_scale(s) == scale[i]);
        if (a != apply[i] || dlb_amp_scaler_scale(s) != scale[i])
            fprintf(stderr, "  at step %d of \"%s\": apply %d scale %g\n", i,
                    seq, a, (double)dlb_amp_scaler_scale(s));
    }
}

static void test_dynamic(void)
{
    struct dlb_amp_scaler s;
    /* init 65536, growth 2, backoff 0.5, interval 3 */
    dlb_amp_scaler_init(&s, DLB_AMP_SCALE_DYNAMIC, 65536.0f, 2.0f, 0.5f, 3);
    CHECK(dlb_amp_scaler_scale(&s) == 65536.0f);
    /* o: skip, 32768. ..: two clean (no growth yet). o: skip, 16384 and the
     * clean count restarts. ...: grows on the third, 32768. ...: 65536.
     * oo: two skips, 16384. */
    static const char seq[] = "o..o......oo";
    static const int apply[] = {0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0};
    static const float scale[] = {32768, 32768, 32768, 16384, 16384, 16384,
                                  32768, 32768, 32768, 65536, 32768, 16384};
    run(&s, seq, apply, scale);
    CHECK(s.steps == 12);
    CHECK(s.skipped == 4);
    CHECK(s.backoffs == 4);
    CHECK(s.growths == 2);
}

static void test_default_interval(void)
{
    struct dlb_amp_scaler s;
    dlb_amp_scaler_init(&s, DLB_AMP_SCALE_DYNAMIC, 65536.0f, 2.0f, 0.5f, 2000);
    for (int i = 0; i < 1999; i++)
        CHECK(dlb_amp_scaler_update(&s, 0) == 1);
    CHECK(dlb_amp_scaler_scale(&s) == 65536.0f);
    CHECK(dlb_amp_scaler_update(&s, 0) == 1);  /* the 2000th clean step */
    CHECK(dlb_amp_scaler_scale(&s) == 131072.0f);
    /* An overflow at step 1999 of the next interval restarts the count. */
    for (int i = 0; i < 1999; i++)
        dlb_amp_scaler_update(&s, 0);
    CHECK(dlb_amp_scaler_update(&s, 1) == 0);
    CHECK(dlb_amp_scaler_scale(&s) == 65536.0f);
    for (int i = 0; i < 1999; i++)
        dlb_amp_scaler_update(&s, 0);
    CHECK(dlb_amp_scaler_scale(&s) == 65536.0f);
    dlb_amp_scaler_update(&s, 0);
    CHECK(dlb_amp_scaler_scale(&s) == 131072.0f);
}

static void test_static_and_none(void)
{
    struct dlb_amp_scaler s;
    dlb_amp_scaler_init(&s, DLB_AMP_SCALE_STATIC, 1024.0f, 2.0f, 0.5f, 1);
    static const int apply_s[] = {1, 0, 1, 0};
    static const float scale_s[] = {1024, 1024, 1024, 1024};
    run(&s, ".o.o", apply_s, scale_s);
    CHECK(s.skipped == 2 && s.growths == 0 && s.backoffs == 0);

    dlb_amp_scaler_init(&s, DLB_AMP_SCALE_NONE, 1024.0f, 2.0f, 0.5f, 1);
    static const int apply_n[] = {1, 1, 1};
    static const float scale_n[] = {1, 1, 1};
    run(&s, ".o.", apply_n, scale_n);
    CHECK(s.skipped == 0);
}

static void test_reset_and_limits(void)
{
    struct dlb_amp_scaler s;
    dlb_amp_scaler_init(&s, DLB_AMP_SCALE_DYNAMIC, 8.0f, 2.0f, 0.25f, 1);
    dlb_amp_scaler_update(&s, 1);
    CHECK(dlb_amp_scaler_scale(&s) == 2.0f);   /* backoff 0.25 */
    dlb_amp_scaler_update(&s, 0);
    CHECK(dlb_amp_scaler_scale(&s) == 4.0f);   /* interval 1 */
    dlb_amp_scaler_reset(&s);
    CHECK(dlb_amp_scaler_scale(&s) == 8.0f);
    CHECK(s.steps == 0 && s.skipped == 0 && s.growths == 0 && s.clean == 0);
    /* Growth stops at the largest finite scale instead of reaching inf. */
    dlb_amp_scaler_init(&s, DLB_AMP_SCALE_DYNAMIC, 1e38f, 16.0f, 0.5f, 1);
    dlb_amp_scaler_update(&s, 0);
    CHECK(isfinite(dlb_amp_scaler_scale(&s)));
    CHECK(dlb_amp_scaler_scale(&s) == 1e38f);
    /* An interval of 0 behaves as 1. */
    dlb_amp_scaler_init(&s, DLB_AMP_SCALE_DYNAMIC, 1.0f, 2.0f, 0.5f, 0);
    dlb_amp_scaler_update(&s, 0);
    CHECK(dlb_amp_scaler_scale(&s) == 2.0f);
}

int main(void)
{
    test_dynamic();
    test_default_interval();
    test_static_and_none();
    test_reset_and_limits();
    return check_exit();
}
