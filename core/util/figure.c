/* Figures for the console's tables (figure.h). */
#include "util/figure.h"

#include <math.h>
#include <stdio.h>

void dlb_figure_text(char *buf, size_t len, double x)
{
    double a = fabs(x);
    int prec = a >= 1000 ? 0 : a >= 100 ? 1 : a >= 10 ? 2 : 3;
    /* a 19 us step is 0.01877 ms, not 0.019 */
    if (a > 0 && a < 1) {
        prec = 3 - (int)floor(log10(a));
        prec = prec > 9 ? 9 : prec;
    }
    snprintf(buf, len, "%.*f", prec, x);
}

double dlb_figure_unsigned_zero(double x, int decimals)
{
    return fabs(x) < 0.5 * pow(10, -decimals) ? 0.0 : x;
}
