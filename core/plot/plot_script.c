/* The gnuplot script beside each plot: one body drawn as PNG and as SVG,
 * so a user restyles one place and reruns `gnuplot NAME.gp`. */
#include "plot/plot_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* pngcairo draws smoother text than libgd's png, but gnuplot-nox builds may
 * lack it: the script picks whichever this gnuplot has. */
static const char preamble[] =
    "set encoding utf8\n"
    "width = 1100\n"
    "height = %d\n"
    "do for [fmt in \"png svg\"] {\n"
    "  if (fmt eq \"svg\") {\n"
    "    set terminal svg noenhanced size width,height dynamic font \"sans,12\" background \"white\"\n"
    "  } else {\n"
    "    if (strstrt(GPVAL_TERMINALS, \" pngcairo \") > 0) {\n"
    "      set terminal pngcairo noenhanced size width,height font \"sans,11\"\n"
    "    } else {\n"
    "      set terminal png noenhanced size width,height\n"
    "    }\n"
    "  }\n";

static dlb_status write_script(const char *path, const char *name,
                               const char *qtitle, const char *body, int height,
                               struct dlb_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return dlb_errorf(err, DLB_ERR_IO, "cannot create %s: %s", path,
                          strerror(errno));
    fprintf(f, "# dlbench plot %s: reads %s.dat, draws %s.png and %s.svg.\n"
            "# Restyle here, then run: gnuplot %s.gp\n"
            "reset\n", name, name, name, name, name);
    fprintf(f, preamble, height > 0 ? height : 600);
    fprintf(f, "  set output '%s.'.fmt\n  set title %s\n", name, qtitle);
    /* Indent the body so the block reads as one. */
    for (const char *s = body; *s;) {
        size_t len = strcspn(s, "\n");
        fprintf(f, "  %.*s\n", (int)len, s);
        s += len + (s[len] == '\n');
    }
    fputs("  unset output\n}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad)
        return dlb_errorf(err, DLB_ERR_IO, "cannot write %s", path);
    return DLB_OK;
}

static dlb_status list_plot(struct dlb_plotter *p, const char *name,
                            const char *title)
{
    char buf[4][1024];
    static const char *const ext[4] = {"png", "svg", "dat", "gp"};
    for (int i = 0; i < 4; i++)
        snprintf(buf[i], sizeof buf[i], "%s%s.%s", p->rel, name, ext[i]);
    struct dlb_plot_file *v = realloc(p->plots.v, (p->plots.n + 1) * sizeof *v);
    if (!v)
        return DLB_ERR_NOMEM;
    p->plots.v = v;
    struct dlb_plot_file f = {strdup(name), strdup(title), strdup(buf[0]),
                              strdup(buf[1]), strdup(buf[2]), strdup(buf[3])};
    v[p->plots.n++] = f;
    if (!f.name || !f.title || !f.png || !f.svg || !f.data || !f.script)
        return DLB_ERR_NOMEM;
    return DLB_OK;
}

dlb_status dlb_plot_emit(struct dlb_plotter *p, const char *name,
                         const char *title, const char *body, int height,
                         struct dlb_error *err)
{
    char full[900], qtitle[1900], path[4096], script[256], notes[700] = "";
    int k = 0;
    /* "(suite amp; the 60 fastest ...; every configuration: b=1)" */
    if (p->suite && *p->suite)
        k += snprintf(notes + k, sizeof notes - (size_t)k, "suite %.60s", p->suite);
    if (p->rows_note && k >= 0 && (size_t)k < sizeof notes)
        k += snprintf(notes + k, sizeof notes - (size_t)k, "%s%s", k ? "; " : "",
                      p->rows_note);
    if (p->shared && *p->shared && k >= 0 && (size_t)k < sizeof notes)
        snprintf(notes + k, sizeof notes - (size_t)k, "%severy configuration: %.200s",
                 k ? "; " : "", p->shared);
    /* The notes on a line of their own: a long one beside the title ran
     * off the canvas. Each part quoted alone, joined by a newline. */
    dlb_gp_quote(title, qtitle, sizeof qtitle / 2);
    if (notes[0]) {
        char qnotes[sizeof qtitle / 2 - 8];
        snprintf(full, sizeof full, "(%s)", notes);
        dlb_gp_quote(full, qnotes, sizeof qnotes);
        size_t len = strlen(qtitle);
        snprintf(qtitle + len, sizeof qtitle - len, ".\"\\n\".%s", qnotes);
    }
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(path, sizeof path, "%s/%s", p->dir, script);
    dlb_status st = write_script(path, name, qtitle, body, height, err);
    if (st != DLB_OK)
        return st;
    if (p->gnuplot) {
        dlb_plotter_start(p, name);
        if (!p->parallel)
            dlb_plotter_wait(p);
    }
    if (list_plot(p, name, title) != DLB_OK)
        return dlb_errorf(err, DLB_ERR_NOMEM, "out of memory");
    return DLB_OK;
}
