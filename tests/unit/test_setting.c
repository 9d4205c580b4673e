/* setting: a settings table's values by hand (lib/base/setting.h): the flag, parsing of each type
 * with its range (misuse exits 2), validity, the text of a value and of a range */
#include <math.h>
#include <string.h>

#include "check.h"
#include "setting.h"
#include "util.h"

static const char *const forms[] = {"soft", "hinge", NULL};
static const setting s_int = {"ce-topk", "K", "ce_topk", SETTING_INT, 1, 1000, 32, NULL, "top k"};
static const setting s_real = {"beta", "X", "beta", SETTING_REAL, 0, 1e6, 1e-4, NULL, "KL weight"};
static const setting s_short = {"K", "N", "K", SETTING_INT, 1, 1024, 8, NULL, "samples"};
static const setting s_choice = {"triplet", "FORM", "triplet", SETTING_CHOICE, 0, 0, 0, forms, "form"};
static const setting s_stored = {NULL, NULL, "gamma0", SETTING_REAL, -1, 1, 0, NULL, "derived"};

/* 1 when parsing text for s exits with status 2 (misuse) */
static int misuse(const setting *s, const char *text)
{
    if (check_child()) {
        setting_parse(s, text);
        _exit(0);
    }
    return check_exited(2);
}

int main(void)
{
    util_start(1, (char *[]){"test_setting", NULL}, "test_setting");
    char buf[128];
    CHECK(!strcmp(setting_flag(&s_int, buf, sizeof buf), "--ce-topk"));
    CHECK(!strcmp(setting_flag(&s_short, buf, sizeof buf), "-K"));
    CHECK(!strcmp(setting_flag(&s_stored, buf, sizeof buf), "gamma0"));
    CHECK(setting_parse(&s_int, "7") == 7 && setting_parse(&s_int, "1000") == 1000);
    CHECK(setting_parse(&s_real, "1e-3") == 1e-3 && setting_parse(&s_real, "0") == 0);
    CHECK(setting_parse(&s_choice, "hinge") == 1 && setting_parse(&s_choice, "soft") == 0);
    CHECK(misuse(&s_int, "0") && misuse(&s_int, "1001") && misuse(&s_int, "2.5") && misuse(&s_int, ""));
    CHECK(misuse(&s_real, "-1") && misuse(&s_real, "nan") && misuse(&s_real, "1x"));
    CHECK(misuse(&s_choice, "Soft") && misuse(&s_choice, ""));
    CHECK(setting_choice(&s_choice, "hinge") == 1 && setting_choice(&s_choice, "square") < 0);
    CHECK(setting_choice(&s_int, "7") < 0); /* no names */
    CHECK(setting_valid(&s_int, 32) && !setting_valid(&s_int, 32.5) && !setting_valid(&s_int, 0));
    CHECK(setting_valid(&s_real, 1e6) && !setting_valid(&s_real, NAN) && !setting_valid(&s_real, 1e7));
    CHECK(setting_valid(&s_choice, 1) && !setting_valid(&s_choice, 2) && !setting_valid(&s_choice, -1));
    CHECK(!strcmp(setting_format(&s_int, 32, buf, sizeof buf), "32"));
    CHECK(!strcmp(setting_format(&s_real, 1e-4, buf, sizeof buf), "0.0001"));
    CHECK(!strcmp(setting_format(&s_choice, 1, buf, sizeof buf), "hinge"));
    CHECK(!strcmp(setting_format(&s_choice, 5, buf, sizeof buf), "?"));
    CHECK(!strcmp(setting_format(&s_real, NAN, buf, sizeof buf), "derived"));
    CHECK(!strcmp(setting_range(&s_int, buf, sizeof buf), "1..1000"));
    CHECK(!strcmp(setting_range(&s_real, buf, sizeof buf), "0..1e+06"));
    CHECK(!strcmp(setting_range(&s_choice, buf, sizeof buf), "soft | hinge"));
    /* a value formatted is the value parsed back */
    CHECK(setting_parse(&s_real, setting_format(&s_real, 0.375, buf, sizeof buf)) == 0.375);
    return check_done("test_setting");
}
