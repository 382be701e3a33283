/* Knob values: parsing and formatting with units, the knob table, the
 * environment. Exact decimal arithmetic (no strtod) so that "0.1us" is
 * exactly 100000 ps and formatting round-trips. */
#include "knobs.h"
#include "knobs_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const loggp_knob_info loggp_knob_table[LOGGP_KNOB_COUNT] = {
    [LOGGP_KNOB_O_S] = {"o_s", "os", "LOGGP_OS", 0,
                        "send overhead: busy-wait on the sender's CPU in every send"},
    [LOGGP_KNOB_O_R] = {"o_r", "or", "LOGGP_OR", 0,
                        "receive overhead: busy-wait on the receiver's CPU per message received"},
    [LOGGP_KNOB_GAP] = {"g", "g", "LOGGP_GAP", 0,
                        "gap: minimum spacing between successive injections of one process"},
    [LOGGP_KNOB_GAP_PER_BYTE] = {"G", "G", "LOGGP_GAP_PER_BYTE", 1,
                                 "Gap per byte: (k-1)*G more spacing and flight time for k bytes"},
    [LOGGP_KNOB_LATENCY] = {"L", "L", "LOGGP_LATENCY", 0,
                            "latency: delay before a message becomes visible to the receiver"},
};

void loggp_set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

typedef struct {
    const char *name;
    int pow10; /* unit = 10^pow10 ps */
} time_unit;

/* Micro: the micro sign U+00B5 and the Greek mu U+03BC look alike; both are taken. */
static const time_unit time_units[] = {
    {"ps", 0}, {"ns", 3}, {"us", 6}, {"\xc2\xb5s", 6}, {"\xce\xbcs", 6}, {"ms", 9}, {"s", 12},
};

typedef struct {
    const char *name;
    uint64_t bytes;
} size_unit;

static const size_unit size_units[] = {
    {"B", 1},
    {"KiB", 1024},
    {"MiB", 1024 * 1024},
    {"GiB", UINT64_C(1024) * 1024 * 1024},
    {"kB", 1000},
    {"KB", 1000},
    {"MB", 1000000},
    {"GB", 1000000000},
};

static const time_unit *find_time_unit(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof time_units / sizeof time_units[0]; i++)
        if (strlen(time_units[i].name) == n && memcmp(s, time_units[i].name, n) == 0)
            return &time_units[i];
    return NULL;
}

static const size_unit *find_size_unit(const char *s)
{
    for (size_t i = 0; i < sizeof size_units / sizeof size_units[0]; i++)
        if (strcmp(s, size_units[i].name) == 0)
            return &size_units[i];
    return NULL;
}

#define TIME_UNITS "ps, ns, us (or \xc2\xb5s, with the micro sign or the Greek mu), ms or s"
#define PER_BYTE_UNITS "ps, ns, us, ms or s per B, KiB, MiB, GiB, kB, MB or GB"

/* " (units are case-sensitive: did you mean 'us'?)" when the unit matches a
 * time unit but for case, else "". */
static const char *case_hint(const char *unit, size_t n, char *hint, size_t len)
{
    for (size_t i = 0; i < sizeof time_units / sizeof time_units[0]; i++)
        if (strlen(time_units[i].name) == n && strncasecmp(unit, time_units[i].name, n) == 0) {
            snprintf(hint, len, " (units are case-sensitive: did you mean '%s'?)", time_units[i].name);
            return hint;
        }
    return "";
}

typedef unsigned __int128 u128;

/* A step of parsing a knob value refused it as over 10 s (LOGGP_KNOB_MAX_PS). */
#define KNOB_TOO_LARGE (-2)

static int refuse_too_large(const char *text, int per_byte, char *err, size_t errlen)
{
    loggp_set_err(err, errlen, "'%s': over the largest accepted value, 10 s%s", text, per_byte ? " per byte" : "");
    return -1;
}

/* The number at *pp: digits [. digits], as an integer mantissa and its count
 * of decimal places; *pp moves past it. 0, -1 (err says why) or KNOB_TOO_LARGE. */
static int read_mantissa(const char **pp, u128 *mantissa, int *frac_digits, const char *text, const char *example,
                         char *err, size_t errlen)
{
    const char *p = *pp;
    int any_digit = 0;
    const u128 mantissa_cap = (u128)1 << 100;
    *mantissa = 0;
    *frac_digits = 0;
    while (*p >= '0' && *p <= '9') {
        if (*mantissa >= mantissa_cap)
            return KNOB_TOO_LARGE;
        *mantissa = *mantissa * 10 + (u128)(*p - '0');
        any_digit = 1;
        p++;
    }
    if (*p == '.') {
        p++;
        while (*p >= '0' && *p <= '9') {
            if (*frac_digits >= 18) {
                loggp_set_err(err, errlen, "'%s': too many decimal places", text);
                return -1;
            }
            *mantissa = *mantissa * 10 + (u128)(*p - '0');
            (*frac_digits)++;
            any_digit = 1;
            p++;
        }
    }
    if (!any_digit) {
        loggp_set_err(err, errlen, "'%s': not a number with a unit (expected e.g. %s)", text, example);
        return -1;
    }
    *pp = p;
    return 0;
}

/* What follows the number, before its unit: an exponent or a space is
 * refused, and only 0 may end there. 1 when the value is complete (0), 0 when
 * a unit follows, -1 when refused. */
static int check_after_number(const char *p, u128 mantissa, int per_byte, const char *text, const char *example,
                              char *err, size_t errlen)
{
    if (*p == 'e' || *p == 'E') {
        /* "1e3us" would read as unit "e3us"; say what is wrong instead. */
        loggp_set_err(err, errlen, "'%s': exponents are not accepted; write the value with a unit (e.g. %s)",
                text, example);
        return -1;
    }
    if (*p == ' ' || *p == '\t') {
        loggp_set_err(err, errlen, "'%s': the unit follows the number without a space (e.g. %s; units: %s)",
                text, example, per_byte ? PER_BYTE_UNITS : TIME_UNITS);
        return -1;
    }
    if (*p)
        return 0;
    /* Zero is zero in every unit; any other number needs one. */
    if (mantissa == 0)
        return 1;
    loggp_set_err(err, errlen, "'%s': a bare number has no unit; only 0 may go without one "
            "(expected e.g. %s; units: %s)", text, example, per_byte ? PER_BYTE_UNITS : TIME_UNITS);
    return -1;
}

/* The unit at `unit`: a time unit, and for a per-byte knob "/<size unit>";
 * *tu_out and *divisor_out (the size unit's bytes, else 1). 0 or -1. */
static int read_unit(const char *unit, int per_byte, const time_unit **tu_out, uint64_t *divisor_out,
                     const char *text, const char *example, char *err, size_t errlen)
{
    const char *slash = strchr(unit, '/');
    size_t time_len = slash ? (size_t)(slash - unit) : strlen(unit);
    const time_unit *tu = find_time_unit(unit, time_len);
    uint64_t divisor = 1;
    char hint[64];
    if (strpbrk(unit, " \t")) {
        loggp_set_err(err, errlen, "'%s': a value has no spaces; the unit follows the number directly (e.g. %s)",
                text, example);
        return -1;
    }
    if (per_byte) {
        if (tu && !slash) {
            loggp_set_err(err, errlen, "'%s': G is a time per byte: add the size after a slash (e.g. %s/B)",
                    text, text);
            return -1;
        }
        if (!tu) {
            loggp_set_err(err, errlen, "'%s': unknown unit '%s' for a time per byte%s (use %s, e.g. 0.5ns/B)",
                    text, unit, case_hint(unit, time_len, hint, sizeof hint), PER_BYTE_UNITS);
            return -1;
        }
        const size_unit *su = find_size_unit(slash + 1);
        if (!su) {
            loggp_set_err(err, errlen, "'%s': unknown size unit '%s' (use B, KiB, MiB, GiB, kB, MB or GB; "
                    "units are case-sensitive)", text, slash + 1);
            return -1;
        }
        divisor = su->bytes;
    } else if (!tu || slash) {
        loggp_set_err(err, errlen, "'%s': unknown time unit '%s'%s (use %s, right after the number: %s)", text, unit,
                case_hint(unit, time_len, hint, sizeof hint), TIME_UNITS, example);
        return -1;
    }
    *tu_out = tu;
    *divisor_out = divisor;
    return 0;
}

/* time_ps = mantissa * 10^(pow10 - frac_digits), which must be whole: the
 * knobs keep whole picoseconds, and a value that would round to another one
 * is refused rather than changed silently. Per KiB, MiB...: the nearest whole
 * ps per byte (1us/KiB is 977ps/B), but never a nonzero value that would
 * become 0. 0, -1 or KNOB_TOO_LARGE. */
static int scale_to_ps(u128 mantissa, int frac_digits, int pow10, uint64_t divisor, int64_t *out,
                       const char *text, char *err, size_t errlen)
{
    int exponent = pow10 - frac_digits;
    u128 numerator = mantissa;
    const u128 limit = (u128)LOGGP_KNOB_MAX_PS * divisor;
    for (; exponent > 0; exponent--) {
        if (numerator > limit)
            return KNOB_TOO_LARGE;
        numerator *= 10;
    }
    u128 scale = 1;
    for (; exponent < 0; exponent++)
        scale *= 10;
    if (numerator % scale != 0) {
        loggp_set_err(err, errlen, "'%s': finer than the knobs' resolution of 1 ps; it would not be kept as "
                "written (use whole picoseconds)", text);
        return -1;
    }
    numerator /= scale;
    u128 value = (numerator + divisor / 2) / divisor;
    if (value == 0 && numerator != 0) {
        loggp_set_err(err, errlen, "'%s': under 1 ps per byte, the knobs' resolution; it would become 0", text);
        return -1;
    }
    if (value > (u128)LOGGP_KNOB_MAX_PS)
        return KNOB_TOO_LARGE;
    *out = (int64_t)value;
    return 0;
}

int loggp_parse_knob(loggp_knob_id id, const char *text, int64_t *out, char *err, size_t errlen)
{
    if ((unsigned)id >= LOGGP_KNOB_COUNT) {
        loggp_set_err(err, errlen, "unknown knob");
        return -1;
    }
    const int per_byte = loggp_knob_table[id].per_byte;
    const char *example = per_byte ? "0.5ns/B" : "10us";
    if (!text || !*text) {
        loggp_set_err(err, errlen, "empty value (expected e.g. %s)", example);
        return -1;
    }
    const char *p = text;
    if (*p == '-') {
        loggp_set_err(err, errlen, "'%s': negative values are not allowed (knobs are increments >= 0)", text);
        return -1;
    }
    if (*p == '+') {
        loggp_set_err(err, errlen, "'%s': a sign is not accepted; write the value without it (e.g. %s)", text,
                example);
        return -1;
    }
    u128 mantissa;
    int frac_digits;
    int rc = read_mantissa(&p, &mantissa, &frac_digits, text, example, err, errlen);
    if (rc == 0) {
        rc = check_after_number(p, mantissa, per_byte, text, example, err, errlen);
        if (rc == 1) {
            *out = 0;
            return 0;
        }
    }
    const time_unit *tu = NULL;
    uint64_t divisor = 1;
    if (rc == 0)
        rc = read_unit(p, per_byte, &tu, &divisor, text, example, err, errlen);
    if (rc == 0)
        rc = scale_to_ps(mantissa, frac_digits, tu->pow10, divisor, out, text, err, errlen);
    return rc == KNOB_TOO_LARGE ? refuse_too_large(text, per_byte, err, errlen) : rc;
}

/* ps as a decimal in units of 10^pow10 ps, trailing zeros trimmed. */
static void format_scaled(int64_t ps, int pow10, char *buf, size_t len)
{
    int64_t unit = 1;
    for (int i = 0; i < pow10; i++)
        unit *= 10;
    int64_t whole = ps / unit, frac = ps % unit;
    if (frac == 0) {
        snprintf(buf, len, "%lld", (long long)whole);
        return;
    }
    char digits[24];
    for (int i = pow10 - 1; i >= 0; i--, frac /= 10)
        digits[i] = (char)('0' + frac % 10);
    digits[pow10] = '\0';
    size_t n = (size_t)pow10;
    while (n > 0 && digits[n - 1] == '0')
        digits[--n] = '\0';
    snprintf(buf, len, "%lld.%s", (long long)whole, digits);
}

void loggp_format_knob(loggp_knob_id id, int64_t value, char *buf, size_t len)
{
    static const struct {
        const char *name;
        int pow10;
    } units[] = {{"s", 12}, {"ms", 9}, {"us", 6}, {"ns", 3}};
    int pow10 = 3;
    const char *name = "ns";
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        int64_t unit = 1;
        for (int k = 0; k < units[i].pow10; k++)
            unit *= 10;
        if (value >= unit) {
            pow10 = units[i].pow10;
            name = units[i].name;
            break;
        }
    }
    char number[48];
    format_scaled(value, pow10, number, sizeof number);
    const int per_byte = (unsigned)id < LOGGP_KNOB_COUNT && loggp_knob_table[id].per_byte;
    snprintf(buf, len, "%s%s%s", number, name, per_byte ? "/B" : "");
}

void loggp_format_ns(int64_t ps, char *buf, size_t len)
{
    format_scaled(ps, 3, buf, len);
}

int loggp_knob_by_name(const char *name)
{
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (strcmp(name, loggp_knob_table[i].name) == 0)
            return i;
    return -1;
}

int loggp_knob_by_flag(const char *flag)
{
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (strcmp(flag, loggp_knob_table[i].flag) == 0)
            return i;
    return -1;
}

char *loggp_trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    return s;
}

/* Bytes of the well-formed UTF-8 character at s that is not a C1 control, or 0. */
static size_t printable_utf8(const unsigned char *s)
{
    unsigned char c = s[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        if (c == 0xc2)
            lo = 0xa0; /* U+0080-U+009F: C1 controls */
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80; /* no overlong forms */
        hi = c == 0xed ? 0x9f : 0xbf; /* no surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

void loggp_escape_text(const char *in, char *out, size_t len)
{
    if (!len)
        return;
    const unsigned char *s = (const unsigned char *)in;
    size_t used = 0;
    while (*s) {
        size_t n = *s >= 0x20 && *s < 0x7f ? 1 : *s >= 0x80 ? printable_utf8(s) : 0;
        if (n ? used + n >= len : used + 4 >= len)
            break;
        if (n) {
            memcpy(out + used, s, n);
            used += n;
            s += n;
        } else {
            snprintf(out + used, 5, "\\x%02x", *s++);
            used += 4;
        }
    }
    out[used] = '\0';
}

const char *const loggp_scope_names[2] = {"all", "kernel"};

int loggp_parse_scope(const char *text, int *scope, char *err, size_t errlen)
{
    for (int s = 0; s < 2; s++)
        if (strcmp(text, loggp_scope_names[s]) == 0) {
            *scope = s;
            return 0;
        }
    loggp_set_err(err, errlen, "scope '%s': expected all or kernel", text);
    return -1;
}

int loggp_scope_from_env(int *scope, char *err, size_t errlen)
{
    const char *value = getenv("LOGGP_SCOPE");
    if (!value || !*value)
        return 0;
    char why[128];
    if (loggp_parse_scope(value, scope, why, sizeof why) != 0) {
        loggp_set_err(err, errlen, "LOGGP_SCOPE=%s: expected all or kernel", value);
        return -1;
    }
    return 1;
}

int loggp_knobs_apply_env(loggp_knobs *knobs, unsigned *from_env, char *err, size_t errlen)
{
    unsigned mask = 0;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        const char *value = getenv(loggp_knob_table[i].env);
        if (!value)
            continue;
        char why[256];
        if (loggp_parse_knob((loggp_knob_id)i, value, &knobs->ps[i], why, sizeof why) != 0) {
            loggp_set_err(err, errlen, "%s=%s: %s", loggp_knob_table[i].env, value, why);
            return -1;
        }
        mask |= 1u << i;
    }
    if (from_env)
        *from_env = mask;
    return 0;
}
