/* The dashboard's page frame: escaping, the inline style, the machine
 * filter and its script. */
#include "dashboard/dash_impl.h"

#include <math.h>
#include <string.h>
#include <time.h>

void dlb_html_put(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
}

/* Colours that stay apart for the colour-blind (Okabe and Ito's), then
 * greys. The change points' red is none of them. */
const char *dlb_dash_colour(size_t machine)
{
    static const char *const c[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7",
                                    "#56b4e9", "#f0e442", "#000000", "#999999"};
    return c[machine % (sizeof c / sizeof *c)];
}

double dlb_dash_time(const char *iso)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *end = iso ? strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
    if (!end)
        return NAN;
    return (double)timegm(&tm);
}

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}"
    "header{background:#263238;color:#fff;padding:12px 20px}"
    "header h1{margin:0;font-size:20px}header p{margin:4px 0 0;color:#cfd8dc}"
    "header a{color:#fff}"
    "main{padding:12px 20px}"
    "#machines{margin:8px 0;padding:8px;background:#fff;border:1px solid #ddd}"
    "#machines label{margin-right:14px;white-space:nowrap}"
    ".swatch{display:inline-block;width:10px;height:10px;margin-right:4px}"
    "table{border-collapse:collapse;background:#fff;margin:8px 0}"
    "td,th{border:1px solid #ddd;padding:4px 8px;font-size:13px;text-align:left}"
    "th{background:#eceff1}td.num{text-align:right}"
    ".state-new{color:#b71c1c;font-weight:bold}.state-candidate{color:#e65100}"
    ".state-acknowledged{color:#1565c0}.state-dismissed,.state-unconfirmed{color:#777}"
    ".chart{display:inline-block;vertical-align:top;margin:6px;background:#fff;"
    "border:1px solid #ddd;padding:4px}"
    ".chart h3{font-size:13px;margin:2px 4px;font-weight:normal}"
    "svg text{font-size:10px;font-family:system-ui,sans-serif}"
    ".hidden{display:none}code{font-size:12px}";

/* The filter: unticking a machine hides its lines, points and change
 * points everywhere on the page; #machine=NAME in the address shows that
 * machine alone. data-ready on <body> says the script ran. */
static const char script[] =
    "(function(){"
    "var boxes=document.querySelectorAll('#machines input');"
    "function apply(){"
    "var on={};boxes.forEach(function(b){on[b.value]=b.checked;});"
    "document.querySelectorAll('[data-machine]').forEach(function(e){"
    "if(e.tagName==='INPUT')return;"
    "e.classList.toggle('hidden',!on[e.getAttribute('data-machine')]);});"
    "var shown=0;document.querySelectorAll('.chart').forEach(function(c){"
    "var any=c.querySelector('[data-machine]:not(.hidden)');"
    "c.classList.toggle('hidden',!any);if(any)shown++;});"
    "document.body.setAttribute('data-charts-shown',shown);}"
    "var m=/machine=([^&]*)/.exec(location.hash);"
    "if(m){var want=decodeURIComponent(m[1]);"
    "boxes.forEach(function(b){b.checked=b.value===want;});}"
    "boxes.forEach(function(b){b.addEventListener('change',apply);});"
    "apply();document.body.setAttribute('data-ready','1');})();";

void dlb_dash_head(FILE *f, const char *title, const char *subtitle,
                   char *const *machines, size_t n_machines)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width\"><title>", f);
    dlb_html_put(f, title);
    fprintf(f, "</title><style>%s</style></head>\n<body>\n<header><h1>", style);
    dlb_html_put(f, title);
    fputs("</h1><p>", f);
    fputs(subtitle, f); /* built by the caller, already escaped */
    fputs("</p></header>\n<main>\n<div id=\"machines\">machines:", f);
    for (size_t i = 0; i < n_machines; i++) {
        fputs(" <label><input type=\"checkbox\" checked value=\"", f);
        dlb_html_put(f, machines[i]);
        fputs("\" data-machine=\"", f);
        dlb_html_put(f, machines[i]);
        fprintf(f, "\"><span class=\"swatch\" style=\"background:%s\"></span>",
                dlb_dash_colour(i));
        dlb_html_put(f, machines[i]);
        fputs("</label>", f);
    }
    fputs("</div>\n", f);
}

void dlb_dash_foot(FILE *f)
{
    fprintf(f, "</main>\n<script>%s</script>\n</body></html>\n", script);
}
