/* loggp's Hint API: a program marks where its kernel runs, so that loggp can
 * apply its knobs there only (LOGGP_SCOPE=kernel, `loggp run --scope kernel`)
 * and split its profile by region. Link with -lloggp-hint (`pkg-config
 * loggp`, or find_package(loggp) and loggp::hint in CMake): without
 * libloggp.so preloaded the call does nothing and returns 0. */
#ifndef LOGGP_H
#define LOGGP_H

#ifdef __cplusplus
extern "C" {
#endif

/* key "IN_KERNEL", value "1" on entering the kernel region, "0" on leaving it.
 * Returns 0 when applied, -1 for an unknown key or value. */
int loggp_hint(const char *key, const char *value);

#ifdef __cplusplus
}
#endif

#endif
