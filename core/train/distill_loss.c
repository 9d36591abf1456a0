/* Log-sum-exp, softmax and KL divergence per row, in double. */
#include "train/distill_loss.h"

#include <math.h>
#include <stddef.h>

/* log(sum_k exp(x_k / T)), shifted by the row's maximum so that no
 * exponent overflows at small temperatures. One for the host's fp32
 * logits, one for the double ones of the loss. */
static double lse_f(const float *x, uint32_t classes, double T)
{
    double mx = x[0] / T, sum = 0.0;
    for (uint32_t k = 1; k < classes; k++)
        mx = x[k] / T > mx ? x[k] / T : mx;
    for (uint32_t k = 0; k < classes; k++)
        sum += exp(x[k] / T - mx);
    return mx + log(sum);
}

static double lse_d(const double *x, uint32_t classes, double T)
{
    double mx = x[0] / T, sum = 0.0;
    for (uint32_t k = 1; k < classes; k++)
        mx = x[k] / T > mx ? x[k] / T : mx;
    for (uint32_t k = 0; k < classes; k++)
        sum += exp(x[k] / T - mx);
    return mx + log(sum);
}

double dlb_distill_soft_grad(const float *z, const float *t, uint32_t n,
                             uint32_t classes, double temperature,
                             double alpha, float *grad)
{
    double kl = 0.0, f = alpha * temperature / n;
    if (n == 0 || classes == 0)
        return NAN;
    for (uint32_t i = 0; i < n; i++) {
        const float *zi = z + (size_t)i * classes, *ti = t + (size_t)i * classes;
        float *gi = grad + (size_t)i * classes;
        double lz = lse_f(zi, classes, temperature);
        double lt = lse_f(ti, classes, temperature);
        for (uint32_t k = 0; k < classes; k++) {
            double log_p = ti[k] / temperature - lt;
            double log_q = zi[k] / temperature - lz;
            double p = exp(log_p);
            kl += p * (log_p - log_q);
            gi[k] = (float)((double)gi[k] + f * (exp(log_q) - p));
        }
    }
    return kl / n;
}

double dlb_distill_loss(const double *z, const double *t, const int32_t *labels,
                        uint32_t n, uint32_t classes, double temperature,
                        double alpha)
{
    double nll = 0.0, kl = 0.0;
    for (uint32_t i = 0; i < n; i++) {
        const double *zi = z + (size_t)i * classes, *ti = t + (size_t)i * classes;
        double lz = lse_d(zi, classes, temperature);
        double lt = lse_d(ti, classes, temperature);
        nll += lse_d(zi, classes, 1.0) - zi[labels[i]];
        for (uint32_t k = 0; k < classes; k++) {
            double log_p = ti[k] / temperature - lt;
            kl += exp(log_p) * (log_p - (zi[k] / temperature - lz));
        }
    }
    return (1.0 - alpha) * nll / n +
           alpha * temperature * temperature * kl / n;
}
