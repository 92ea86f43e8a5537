/* SPDX-License-Identifier: Apache-2.0 */
/* fn-time.c — time, currentTime, timeZoneOffset, dayTime, getYear ...
 * getSeconds, splitTime, formatTime, interval, absTime, relTime
 * (fnCall.cpp epochTime, currentTime, timeZoneOffset, dayTime, getField,
 * splitTime, formatTime, interval, convTime). The clock is ca_now(); the
 * time zone is the process's local one. */
#include "fn-internal.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static bool no_args(uint32_t nargs, CaValue *ret) {
        return fn_arity(nargs, 0, 0, ret);
}

static bool local_tm(int64_t t, struct tm *tms) {
        time_t clock = (time_t) t;
        if (localtime_r(&clock, tms))
                return true;
        memset(tms, 0, sizeof(*tms));
        return false;
}

/* time(): seconds since the epoch, an integer. */
static void fn_time(CaEval *ev _unused_, const CaNode *const *args _unused_, uint32_t nargs, CaValue *ret) {
        if (no_args(nargs, ret))
                *ret = ca_int(ca_now());
}

/* currentTime(): an absolute time with the local offset. */
static void fn_currenttime(CaEval *ev _unused_, const CaNode *const *args _unused_, uint32_t nargs, CaValue *ret) {
        if (!no_args(nargs, ret))
                return;
        int64_t now = ca_now();
        *ret = ca_abstime(now, (int32_t) fn_tz_offset(now, false));
}

/* timeZoneOffset(): the local offset (with DST) as a relative time. */
static void fn_timezoneoffset(CaEval *ev _unused_, const CaNode *const *args _unused_, uint32_t nargs,
                              CaValue *ret) {
        if (no_args(nargs, ret))
                *ret = ca_reltime((double) fn_tz_offset(ca_now(), false));
}

/* dayTime(): seconds since local midnight as a relative time. */
static void fn_daytime(CaEval *ev _unused_, const CaNode *const *args _unused_, uint32_t nargs, CaValue *ret) {
        if (!no_args(nargs, ret))
                return;
        struct tm tms;
        local_tm(ca_now(), &tms);
        *ret = ca_reltime((double) (tms.tm_hour * 3600 + tms.tm_min * 60 + tms.tm_sec));
}

typedef enum Field {
        F_YEAR, F_MONTH, F_DAYOFYEAR, F_DAYOFMONTH, F_DAYOFWEEK, F_DAYS, F_HOURS, F_MINUTES, F_SECONDS,
} Field;

/* get*(t): fields of an absolute time in the local time zone (not the
 * value's own offset; getDayOfYear counts from 0, getDayOfWeek from
 * Sunday = 0, getDays is ERROR); of a relative time only getDays,
 * getHours, getMinutes, getSeconds, from its whole seconds (getField).
 * Anything else, UNDEFINED included, is ERROR. */
static void get_field(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, Field f) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        ca_eval(ev, args[0], &v);
        *ret = ca_error();
        if (v.type == CA_ABSTIME) {
                struct tm t;
                local_tm(v.u.at.secs, &t);
                switch (f) {
                case F_YEAR: *ret = ca_int(t.tm_year + 1900); break;
                case F_MONTH: *ret = ca_int(t.tm_mon + 1); break;
                case F_DAYOFYEAR: *ret = ca_int(t.tm_yday); break;
                case F_DAYOFMONTH: *ret = ca_int(t.tm_mday); break;
                case F_DAYOFWEEK: *ret = ca_int(t.tm_wday); break;
                case F_HOURS: *ret = ca_int(t.tm_hour); break;
                case F_MINUTES: *ret = ca_int(t.tm_min); break;
                case F_SECONDS: *ret = ca_int(t.tm_sec); break;
                default: break;
                }
        } else if (v.type == CA_RELTIME) {
                int64_t r = fn_reltime_secs(&v);
                switch (f) {
                case F_DAYS: *ret = ca_int(r / 86400); break;
                case F_HOURS: *ret = ca_int((r % 86400) / 3600); break;
                case F_MINUTES: *ret = ca_int((r % 3600) / 60); break;
                case F_SECONDS: *ret = ca_int(r % 60); break;
                default: break;
                }
        }
        ca_value_clear(&v);
}

#define GETTER(fname, field) \
        static void fname(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) { \
                get_field(ev, args, nargs, ret, field); \
        }
GETTER(fn_getyear, F_YEAR)
GETTER(fn_getmonth, F_MONTH)
GETTER(fn_getdayofyear, F_DAYOFYEAR)
GETTER(fn_getdayofmonth, F_DAYOFMONTH)
GETTER(fn_getdayofweek, F_DAYOFWEEK)
GETTER(fn_getdays, F_DAYS)
GETTER(fn_gethours, F_HOURS)
GETTER(fn_getminutes, F_MINUTES)
GETTER(fn_getseconds, F_SECONDS)
#undef GETTER

/* [ Type = "AbsoluteTime"; Year; Month; Day; Hours; Minutes; Seconds;
 * Offset ], the fields as seen at the value's own offset. */
static int abstime_ad(int64_t secs, int32_t offset, ClassAd **ret) {
        time_t clock = (time_t) (secs + offset);
        struct tm t;
        ClassAd *ad;
        if (!gmtime_r(&clock, &t))
                memset(&t, 0, sizeof(t));
        int r = classad_new(&ad);
        if (r < 0)
                return r;
        if ((r = classad_set_string(ad, "Type", "AbsoluteTime")) < 0 ||
            (r = classad_set_int(ad, "Year", t.tm_year + 1900)) < 0 ||
            (r = classad_set_int(ad, "Month", t.tm_mon + 1)) < 0 || (r = classad_set_int(ad, "Day", t.tm_mday)) < 0 ||
            (r = classad_set_int(ad, "Hours", t.tm_hour)) < 0 || (r = classad_set_int(ad, "Minutes", t.tm_min)) < 0 ||
            (r = classad_set_int(ad, "Seconds", t.tm_sec)) < 0 || (r = classad_set_int(ad, "Offset", offset)) < 0) {
                classad_free(ad);
                return r;
        }
        *ret = ad;
        return 0;
}

/* [ Type = "RelativeTime"; Days; Hours; Minutes; Seconds ], Seconds a
 * real; a negative time puts the sign on its leading non-zero field
 * (relTimeToClassAd). */
static int reltime_ad(double rsecs, ClassAd **ret) {
        bool negative = rsecs < 0;
        if (negative)
                rsecs = -rsecs;
        int64_t whole = fn_d2ll(rsecs);
        int64_t days = whole / 86400, hrs = (whole % 86400) / 3600, mins = (whole % 3600) / 60;
        double secs = (double) (whole % 60) + (rsecs - floor(rsecs));
        if (negative) {
                if (days > 0)
                        days = -days;
                else if (hrs > 0)
                        hrs = -hrs;
                else if (mins > 0)
                        mins = -mins;
                else
                        secs = -secs;
        }
        ClassAd *ad;
        int r = classad_new(&ad);
        if (r < 0)
                return r;
        if ((r = classad_set_string(ad, "Type", "RelativeTime")) < 0 || (r = classad_set_int(ad, "Days", days)) < 0 ||
            (r = classad_set_int(ad, "Hours", hrs)) < 0 || (r = classad_set_int(ad, "Minutes", mins)) < 0 ||
            (r = classad_set_real(ad, "Seconds", secs)) < 0) {
                classad_free(ad);
                return r;
        }
        *ret = ad;
        return 0;
}

/* doSplitTime: integers and reals are seconds since the epoch at the
 * local offset (reals truncated); ads are copied. false: not splittable. */
static bool split_time(const CaValue *v, ClassAd **ad, int *err) {
        int64_t secs;
        *err = 0;
        switch (v->type) {
        case CA_INT:
        case CA_REAL:
                secs = v->type == CA_INT ? v->u.i : fn_d2ll(v->u.r);
                *err = abstime_ad(secs, (int32_t) fn_tz_offset(secs, false), ad);
                return true;
        case CA_ABSTIME:
                *err = abstime_ad(v->u.at.secs, v->u.at.offset, ad);
                return true;
        case CA_RELTIME:
                *err = reltime_ad(v->u.rt, ad);
                return true;
        case CA_AD:
                *err = classad_copy(v->u.ad, ad);
                return true;
        default:
                return false;
        }
}

/* splitTime(t): an ad of the fields of t; UNDEFINED stays UNDEFINED, an
 * ad argument and other types are ERROR. */
static void fn_splittime(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        ClassAd *ad;
        int err;
        ca_eval(ev, args[0], &v);
        if (v.type == CA_UNDEFINED)
                *ret = ca_undefined();
        else if (v.type != CA_AD && split_time(&v, &ad, &err) && err >= 0)
                *ret = fn_ad_value(ad);
        else
                *ret = ca_error();
        ca_value_clear(&v);
}

static int ad_int(const ClassAd *ad, const char *name, int dflt) {
        int64_t i;
        return classad_eval_int(ad, name, CA_MODE_OLD, &i) >= 0 ? (int) i : dflt;
}

/* Fixed day number of a Gregorian date (R.D. 1 = Monday, January 1, 1). */
static int64_t fixed_from_gregorian(int64_t year, int64_t month, int64_t day) {
        bool leap = year % 4 == 0 && year % 400 != 100 && year % 400 != 200 && year % 400 != 300;
        int64_t adjust = month <= 2 ? 0 : leap ? -1 : -2;
        return 365 * (year - 1) + (year - 1) / 4 - (year - 1) / 100 + (year - 1) / 400 + (367 * month - 362) / 12 +
               adjust + day;
}

static CaValue format_tm(const struct tm *t, const char *format) {
        char out[1024];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
        size_t n = strftime(out, sizeof(out) - 1, format, t); /* the user's format, as HTCondor does */
#pragma GCC diagnostic pop
        out[n] = 0;
        return ca_string(out);
}

/* formatTime([t [, format]]): strftime() of t (now, local time, without
 * arguments), default format "%c". t goes through splitTime (so an ad
 * with Year, Month, ... works, missing fields being 0); a relative time,
 * UNDEFINED and a non-string format are ERROR (formatTime). */
static void fn_formattime(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 0, 2, ret))
                return;
        struct tm t;
        if (nargs == 0) {
                local_tm(ca_now(), &t);
                *ret = format_tm(&t, "%c");
                return;
        }
        CaValue v;
        ClassAd *ad;
        int err;
        ca_eval(ev, args[0], &v);
        if (v.type == CA_RELTIME || !split_time(&v, &ad, &err) || err < 0) {
                ca_value_clear(&v);
                *ret = ca_error();
                return;
        }
        ca_value_clear(&v);
        memset(&t, 0, sizeof(t));
        t.tm_sec = ad_int(ad, "Seconds", 0);
        t.tm_min = ad_int(ad, "Minutes", 0);
        t.tm_hour = ad_int(ad, "Hours", 0);
        t.tm_mday = ad_int(ad, "Day", 0);
        t.tm_mon = ad_int(ad, "Month", 1) - 1;
        t.tm_year = ad_int(ad, "Year", 1900) - 1900;
        classad_free(ad);
        /* weekday and day of year from the fields themselves (day_numbers) */
        int64_t fixed = fixed_from_gregorian(t.tm_year + 1900, t.tm_mon + 1, t.tm_mday);
        t.tm_wday = (int) (fixed % 7);
        t.tm_yday = (int) (fixed - fixed_from_gregorian(t.tm_year + 1900, 1, 1));

        if (nargs == 1) {
                *ret = format_tm(&t, "%c");
                return;
        }
        CaValue f;
        ca_eval(ev, args[1], &f);
        *ret = f.type == CA_STRING ? format_tm(&t, fn_str(&f)) : ca_error();
        ca_value_clear(&f);
}

/* interval(secs): "[days+]hh:mm:ss" with leading zero fields dropped and
 * the first field unpadded: 67 -> "1:07", 3600 -> "1:00:00". Goes through
 * int(), so UNDEFINED is ERROR. */
static void fn_interval(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        int64_t secs;
        ca_eval(ev, args[0], &v);
        FnConv c = fn_conv_int(&v, &secs);
        ca_value_clear(&v);
        if (c != FN_CONV_OK) {
                *ret = ca_error();
                return;
        }
        int64_t days = secs / 86400, hours = (secs % 86400) / 3600, mins = (secs % 3600) / 60, s = secs % 60;
        CaBuf b = {};
        if (days)
                ca_buf_printf(&b, "%lld+%02lld:%02lld:%02lld", (long long) days, (long long) llabs(hours),
                              (long long) llabs(mins), (long long) llabs(s));
        else if (hours)
                ca_buf_printf(&b, "%lld:%02lld:%02lld", (long long) hours, (long long) llabs(mins),
                              (long long) llabs(s));
        else if (mins)
                ca_buf_printf(&b, "%lld:%02lld", (long long) mins, (long long) llabs(s));
        else
                ca_buf_printf(&b, "%lld", (long long) s);
        *ret = ca_buf_value(&b);
}

/* absTime([t [, offset]]) and relTime(t) (convTime). absTime() is now.
 * Numbers are seconds (reals truncated for absTime); the offset defaults
 * to the local one at t; a given offset may be an integer, real or
 * relative time, anything else is ERROR; relTime takes no offset.
 * absTime of an absolute time returns it unchanged, relTime of one its
 * epoch seconds; absTime of a relative time uses its whole seconds.
 * UNDEFINED stays UNDEFINED; booleans, lists, ads are ERROR. Strings are
 * parsed as the literal forms absTime("...")/relTime("...") (HTCondor
 * folds those at parse time and returns a non-literal string unchanged). */
static void conv_time(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool relative) {
        if (nargs == 0 && !relative) {
                int64_t now = ca_now();
                *ret = ca_abstime(now, (int32_t) fn_tz_offset(now, false));
                return;
        }
        if (!fn_arity(nargs, 1, 2, ret))
                return;
        CaValue v, z = ca_undefined();
        bool have_offset = nargs == 2;
        int64_t offset = 0;
        ca_eval(ev, args[0], &v);
        if (have_offset) {
                ca_eval(ev, args[1], &z);
                if (relative)
                        goto error;
                else if (z.type == CA_INT)
                        offset = (int32_t) z.u.i;
                else if (z.type == CA_REAL)
                        offset = (int32_t) fn_d2ll(z.u.r);
                else if (z.type == CA_RELTIME)
                        offset = fn_reltime_secs(&z);
                else
                        goto error;
        }
        int64_t secs;
        switch (v.type) {
        case CA_UNDEFINED:
                *ret = ca_undefined();
                goto out;
        case CA_INT:
        case CA_REAL:
        case CA_RELTIME:
                if (relative) {
                        *ret = ca_reltime(v.type == CA_INT ? (double) v.u.i : v.type == CA_REAL ? v.u.r : v.u.rt);
                        goto out;
                }
                secs = v.type == CA_INT ? v.u.i : v.type == CA_REAL ? fn_d2ll(v.u.r) : fn_reltime_secs(&v);
                if (!have_offset)
                        offset = fn_tz_offset(secs, false);
                if (v.type == CA_INT && offset == -1) /* convTime treats offset -1 as failure */
                        goto error;
                *ret = ca_abstime(secs, (int32_t) offset);
                goto out;
        case CA_ABSTIME:
                *ret = relative ? ca_reltime((double) v.u.at.secs) : v;
                if (!relative)
                        return; /* v moved into ret; z is a number */
                goto out;
        case CA_STRING: {
                int32_t off;
                double rsecs;
                if (relative && ca_parse_reltime(fn_str(&v), &rsecs))
                        *ret = ca_reltime(rsecs);
                else if (!relative && ca_parse_abstime(fn_str(&v), &secs, &off))
                        *ret = ca_abstime(secs, off);
                else
                        goto error;
                goto out;
        }
        default:
                goto error;
        }
error:
        *ret = ca_error();
out:
        ca_value_clear(&v);
        ca_value_clear(&z);
}

static void fn_abstime(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        conv_time(ev, args, nargs, ret, false);
}

static void fn_reltime(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        conv_time(ev, args, nargs, ret, true);
}

static const CaFunc fns[] = {
        { "time", fn_time, 0 },
        { "currentTime", fn_currenttime, 0 },
        { "timeZoneOffset", fn_timezoneoffset, 0 },
        { "dayTime", fn_daytime, 0 },
        { "getYear", fn_getyear, 0 },
        { "getMonth", fn_getmonth, 0 },
        { "getDayOfYear", fn_getdayofyear, 0 },
        { "getDayOfMonth", fn_getdayofmonth, 0 },
        { "getDayOfWeek", fn_getdayofweek, 0 },
        { "getDays", fn_getdays, 0 },
        { "getHours", fn_gethours, 0 },
        { "getMinutes", fn_getminutes, 0 },
        { "getSeconds", fn_getseconds, 0 },
        { "splitTime", fn_splittime, 0 },
        { "formatTime", fn_formattime, 0 },
        { "interval", fn_interval, CA_FN_PURE },
        { "absTime", fn_abstime, 0 },
        { "relTime", fn_reltime, CA_FN_PURE },
};

const CaFnGroup ca_fn_group_time = { fns, ELEMENTSOF(fns) };
