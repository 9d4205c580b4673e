/* setting: the values of a plug-in's settings table (lib/base/setting.h) */
#include "setting.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

const char *setting_flag(const setting *s, char *buf, size_t n)
{
    if (!s->option)
        snprintf(buf, n, "%s", s->key ? s->key : "?");
    else
        snprintf(buf, n, "%s%s", s->option[1] ? "--" : "-", s->option);
    return buf;
}

int setting_choice(const setting *s, const char *name)
{
    for (int i = 0; s->choices && s->choices[i]; i++)
        if (!strcmp(s->choices[i], name))
            return i;
    return -1;
}

/* the names between sep, the last two between last: "a, b or c" */
static const char *choice_list(const setting *s, const char *sep, const char *last, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (int i = 0; s->choices && s->choices[i] && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i == 0 ? "" : s->choices[i + 1] ? sep : last,
                                 s->choices[i]);
    return buf;
}

double setting_parse(const setting *s, const char *text)
{
    char flag[64], list[256];
    setting_flag(s, flag, sizeof flag);
    switch (s->type) {
    case SETTING_INT: return (double)parse_long(flag, text, (long)s->lo, (long)s->hi);
    case SETTING_REAL: return parse_double(flag, text, s->lo, s->hi);
    case SETTING_CHOICE: {
        int i = setting_choice(s, text);
        if (i < 0)
            usage_die("%s: '%s' is not %s", flag, text, choice_list(s, ", ", " or ", list, sizeof list));
        return i;
    }
    case SETTING_NONE: break;
    }
    usage_die("%s: not a setting", flag);
}

int setting_valid(const setting *s, double v)
{
    switch (s->type) {
    case SETTING_INT: return v >= s->lo && v <= s->hi && v == floor(v);
    case SETTING_REAL: return v >= s->lo && v <= s->hi;
    case SETTING_CHOICE: {
        int k = 0;
        while (s->choices && s->choices[k])
            k++;
        return v >= 0 && v < k && v == floor(v);
    }
    case SETTING_NONE: break;
    }
    return 0;
}

const char *setting_format(const setting *s, double v, char *buf, size_t n)
{
    if (isnan(v))
        snprintf(buf, n, "derived");
    else if (s->type == SETTING_CHOICE)
        snprintf(buf, n, "%s", setting_valid(s, v) ? s->choices[(int)v] : "?");
    else if (s->type == SETTING_INT)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%g", v);
    return buf;
}

const char *setting_range(const setting *s, char *buf, size_t n)
{
    if (s->type == SETTING_CHOICE)
        return choice_list(s, " | ", " | ", buf, n);
    snprintf(buf, n, s->type == SETTING_INT ? "%.0f..%.0f" : "%g..%g", s->lo, s->hi);
    return buf;
}
