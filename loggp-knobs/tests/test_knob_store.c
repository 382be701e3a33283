/* The knob file: strict parsing, atomic private writes, refusal of unsafe files. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "knobs.h"
#include "knobs_internal.h"

static char dir[64];
static char path[PATH_MAX];

static void make_dir(void)
{
    strcpy(dir, "/tmp/loggp-store-XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/conf/loggp/knobs", dir);
}

static void remove_dir(void)
{
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

TestSuite(knob_store, .init = make_dir, .fini = remove_dir);

static void write_file(const char *p, const char *text, mode_t mode)
{
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    chmod(p, mode);
}

Test(knob_store, missing_file_means_all_zero)
{
    loggp_knobs k = {.ps = {1, 1, 1, 1, 1}};
    int exists = 7;
    char err[512];
    cr_assert_eq(loggp_knobs_load(path, &k, &exists, err, sizeof err), 0, "%s", err);
    cr_expect_eq(exists, 0);
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        cr_expect_eq(k.ps[i], 0);
}

Test(knob_store, save_then_load_round_trips_with_private_modes)
{
    loggp_knobs k = {.ps = {10000000, 333, 1500000, 500, 42000000}}, back;
    char err[512];
    cr_assert_eq(loggp_knobs_save(path, &k, err, sizeof err), 0, "%s", err);
    int exists = 0;
    cr_assert_eq(loggp_knobs_load(path, &back, &exists, err, sizeof err), 0, "%s", err);
    cr_expect_eq(exists, 1);
    cr_expect_arr_eq(back.ps, k.ps, sizeof k.ps);

    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0600, "file mode %o", st.st_mode & 0777);
    char parent[PATH_MAX];
    snprintf(parent, sizeof parent, "%s/conf/loggp", dir);
    cr_assert_eq(stat(parent, &st), 0);
    cr_expect_eq(st.st_mode & 0777, 0700, "directory mode %o", st.st_mode & 0777);
}

Test(knob_store, save_leaves_no_temporary_files)
{
    loggp_knobs k = {.ps = {1000, 0, 0, 0, 0}};
    char err[512], parent[PATH_MAX];
    for (int i = 0; i < 5; i++)
        cr_assert_eq(loggp_knobs_save(path, &k, err, sizeof err), 0, "%s", err);
    snprintf(parent, sizeof parent, "%s/conf/loggp", dir);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "test \"$(ls -A '%s')\" = knobs", parent);
    cr_expect_eq(system(cmd), 0, "only the knob file should remain in %s", parent);
}

Test(knob_store, file_text_is_readable)
{
    loggp_knobs k = {.ps = {10000000, 10000000, 0, 500, 0}};
    char text[1024];
    loggp_knobs_serialise(&k, text, sizeof text);
    cr_expect(strstr(text, "o_s = 10us\n") != NULL, "%s", text);
    cr_expect(strstr(text, "G = 0.5ns/B\n") != NULL, "%s", text);
    cr_expect(strstr(text, "L = 0ns\n") != NULL, "%s", text);
}

Test(knob_store, a_knob_the_file_does_not_name_is_zero)
{
    loggp_knobs k = {.ps = {7, 7, 7, 7, 7}};
    char err[512] = "";
    cr_assert_eq(loggp_knobs_parse_text("# hand-edited\no_s = 1us\nG = 0.5ns/B\n", &k, err, sizeof err), 0, "%s", err);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_S], 1000000);
    cr_expect_eq(k.ps[LOGGP_KNOB_GAP_PER_BYTE], 500);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_R], 0);
    cr_expect_eq(k.ps[LOGGP_KNOB_GAP], 0);
    cr_expect_eq(k.ps[LOGGP_KNOB_LATENCY], 0);
}

Test(knob_store, corrupt_files_are_refused_with_the_line)
{
    struct { const char *text; const char *mention; } cases[] = {
        {"o_s = 1us\no_r = 1us\ng = 0ns\nG = 0ns/B\nL = 0ns\nL = 1ns\n", "line 6"},
        {"o_s = 1us\nbogus line\n", "line 2"},
        {"o_s = 1us\nO_R = 1us\n", "unknown knob 'O_R'"},
        {"# c\n\no_s = ten\n", "line 3"},
        {"o_s = -1us\no_r = 0ns\ng = 0ns\nG = 0ns/B\nL = 0ns\n", "negative"},
    };
    mkdir(dir, 0700);
    char conf[PATH_MAX];
    snprintf(conf, sizeof conf, "%s/conf", dir);
    mkdir(conf, 0700);
    snprintf(conf, sizeof conf, "%s/conf/loggp", dir);
    mkdir(conf, 0700);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(path, cases[i].text, 0600);
        loggp_knobs k = {.ps = {7, 7, 7, 7, 7}};
        char err[512] = "";
        cr_expect_eq(loggp_knobs_load(path, &k, NULL, err, sizeof err), -1, "case %zu accepted", i);
        cr_expect(strstr(err, cases[i].mention) != NULL, "case %zu: '%s' lacks '%s'", i, err, cases[i].mention);
        cr_expect(strstr(err, path) != NULL, "error should name the file: %s", err);
        cr_expect_eq(k.ps[0], 7, "a refused file must not change the knobs");
    }
}

Test(knob_store, a_comment_may_end_a_line_as_in_topology_files)
{
    loggp_knobs k;
    char err[512] = "";
    cr_assert_eq(loggp_knobs_parse_text("L = 5us # the cluster's\no_s = 1us#\n  # alone\n", &k, err, sizeof err), 0,
                 "%s", err);
    cr_expect_eq(k.ps[LOGGP_KNOB_LATENCY], 5000000);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_S], 1000000);
    cr_expect_eq(loggp_knobs_parse_text("L = # 5us\n", &k, err, sizeof err), -1, "a value commented out is none");
}

Test(knob_store, a_binary_file_is_named_without_its_raw_bytes)
{
    loggp_knobs k;
    char err[1024] = "";
    const char *text = "\x1b[31mred\x07 \xc2\x85 \xff \xc3\xa9\xc2\xb5\tx = 1\n";
    cr_assert_eq(loggp_knobs_parse_text(text, &k, err, sizeof err), -1);
    cr_expect(strstr(err, "\\x1b[31mred\\x07 \\xc2\\x85 \\xff \xc3\xa9\xc2\xb5\\x09x"), "%s", err);
    for (const unsigned char *c = (const unsigned char *)err; *c; c++)
        cr_expect(*c >= 0x20 && *c != 0x7f, "raw byte 0x%02x in: %s", *c, err);
}

Test(knob_store, a_file_with_crlf_line_ends_reads_as_with_lf)
{
    loggp_knobs k = {.ps = {7, 7, 7, 7, 7}};
    char err[512] = "";
    cr_assert_eq(loggp_knobs_parse_text("o_s = 1us\r\nL = 5us\r\n", &k, err, sizeof err), 0, "%s", err);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_S], 1000000);
    cr_expect_eq(k.ps[LOGGP_KNOB_LATENCY], 5000000);
}

Test(knob_store, escaping_stays_inside_the_buffer_and_whole_characters)
{
    /* out[8] of a larger array: the byte after it must stay untouched */
    char big[16];
    memset(big, '#', sizeof big);
    loggp_escape_text("abcdefghij", big, 8);
    cr_expect_str_eq(big, "abcdefg");
    cr_expect_eq(big[8], '#', "wrote past the buffer");
    memset(big, '#', sizeof big);
    loggp_escape_text("abcd\x01", big, 8); /* "\x01" needs 4 bytes: one short */
    cr_expect_str_eq(big, "abcd");
    cr_expect_eq(big[8], '#', "wrote past the buffer");
    memset(big, '#', sizeof big);
    loggp_escape_text("abcdef\xc3\xa9", big, 8); /* no half of a two-byte character */
    cr_expect_str_eq(big, "abcdef");
    cr_expect_eq(big[8], '#');
}

Test(knob_store, symlink_and_unsafe_modes_are_refused)
{
    loggp_knobs k = {0};
    char err[512];
    cr_assert_eq(loggp_knobs_save(path, &k, err, sizeof err), 0, "%s", err);

    chmod(path, 0666);
    cr_expect_eq(loggp_knobs_load(path, &k, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "writable by others") != NULL, "%s", err);
    chmod(path, 0600);

    char target[PATH_MAX], link[PATH_MAX];
    snprintf(target, sizeof target, "%s/real", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    write_file(target, "o_s = 1us\no_r = 1us\ng = 0ns\nG = 0ns/B\nL = 0ns\n", 0600);
    cr_assert_eq(symlink(target, link), 0);
    cr_expect_eq(loggp_knobs_load(link, &k, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "symbolic link") != NULL, "%s", err);

    /* Saving over a symlink replaces the link; it never writes through it. */
    loggp_knobs big = {.ps = {5000, 0, 0, 0, 0}};
    chmod(dir, 0700);
    cr_assert_eq(loggp_knobs_save(link, &big, err, sizeof err), 0, "%s", err);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_expect(S_ISREG(st.st_mode), "the link should have been replaced by a file");
    FILE *f = fopen(target, "r");
    char buf[128] = "";
    cr_assert_not_null(f);
    cr_expect_not_null(fgets(buf, sizeof buf, f));
    fclose(f);
    cr_expect_str_eq(buf, "o_s = 1us\n", "the link's target must be untouched");

    /* A group-writable directory is refused for writing. */
    char shared[128], inside[256];
    snprintf(shared, sizeof shared, "%s/shared", dir);
    mkdir(shared, 0700);
    chmod(shared, 0777);
    snprintf(inside, sizeof inside, "%s/knobs", shared);
    cr_expect_eq(loggp_knobs_save(inside, &big, err, sizeof err), -1);
    cr_expect(strstr(err, "writable by others") != NULL, "%s", err);
}

Test(knob_store, path_follows_environment)
{
    char buf[PATH_MAX], err[256];
    setenv("LOGGP_KNOB_FILE", "/x/y/knobs", 1);
    cr_assert_eq(loggp_knob_file_path(buf, sizeof buf, err, sizeof err), 0);
    cr_expect_str_eq(buf, "/x/y/knobs");
    unsetenv("LOGGP_KNOB_FILE");
    setenv("XDG_CONFIG_HOME", "/cfg", 1);
    cr_assert_eq(loggp_knob_file_path(buf, sizeof buf, err, sizeof err), 0);
    cr_expect_str_eq(buf, "/cfg/loggp/knobs");
    unsetenv("XDG_CONFIG_HOME");
    setenv("HOME", "/home/u", 1);
    cr_assert_eq(loggp_knob_file_path(buf, sizeof buf, err, sizeof err), 0);
    cr_expect_str_eq(buf, "/home/u/.config/loggp/knobs");
}

Test(knob_store, lock_serialises_writers)
{
    char err[512];
    int fd = loggp_knobs_lock(path, err, sizeof err);
    cr_assert_geq(fd, 0, "%s", err);
    char lockfile[PATH_MAX];
    snprintf(lockfile, sizeof lockfile, "%s/conf/loggp/.knobs.lock", dir);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "flock -n '%s' true", lockfile);
    cr_expect_neq(system(cmd), 0, "a second locker must wait while the lock is held");
    loggp_knobs_unlock(fd);
    cr_expect_eq(system(cmd), 0, "the lock must be free after unlock");
}

Test(knob_store, scope_is_a_file_item_written_only_when_kernel)
{
    loggp_knobs k = {0};
    char err[512] = "", buf[1024];
    cr_assert_eq(loggp_knobs_parse_text("L = 10us\nscope = kernel\n", &k, err, sizeof err), 0, "%s", err);
    cr_assert_eq(k.scope, LOGGP_SCOPE_KERNEL);
    loggp_knobs_serialise(&k, buf, sizeof buf);
    cr_assert(strstr(buf, "scope = kernel\n"));
    loggp_knobs back = {0};
    cr_assert_eq(loggp_knobs_parse_text(buf, &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.scope, LOGGP_SCOPE_KERNEL);
    k.scope = LOGGP_SCOPE_ALL;
    loggp_knobs_serialise(&k, buf, sizeof buf);
    cr_assert_null(strstr(buf, "scope"));
    cr_assert_eq(loggp_knobs_parse_text("scope = inside\n", &k, err, sizeof err), -1);
    cr_assert(strstr(err, "line 1: scope 'inside': expected all or kernel"), "%s", err);
    cr_assert_eq(loggp_knobs_parse_text("scope = all\nscope = kernel\n", &k, err, sizeof err), -1);
    cr_assert(strstr(err, "given twice"), "%s", err);
}

/* "o" (the probe's knob sets) is o_s and o_r at once: either beside it is a knob given twice, in either order. */
Test(knob_store, o_beside_o_s_or_o_r_is_given_twice_in_either_order)
{
    static const char *const pairs[][2] = {{"o=1us", "o_r=2us"}, {"o_r=2us", "o=1us"},
                                           {"o=1us", "o_s=2us"}, {"o_s=2us", "o=1us"}};
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        loggp_knobs k = {0};
        unsigned seen = 0;
        char first[32], second[32], err[256] = "";
        strcpy(first, pairs[i][0]);
        strcpy(second, pairs[i][1]);
        cr_assert_eq(loggp_knobs_parse_item(first, 1, &k, &seen, err, sizeof err), 0, "%s", err);
        cr_expect_eq(loggp_knobs_parse_item(second, 1, &k, &seen, err, sizeof err), -1, "%s then %s accepted",
                     pairs[i][0], pairs[i][1]);
        cr_expect(strstr(err, "given twice"), "%s", err);
    }
    loggp_knobs k = {0};
    unsigned seen = 0;
    char o[] = "o = 3us", err[256] = "";
    cr_assert_eq(loggp_knobs_parse_item(o, 1, &k, &seen, err, sizeof err), 0, "%s", err);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_S], 3000000);
    cr_expect_eq(k.ps[LOGGP_KNOB_O_R], 3000000);
    /* without the alias (the knob file) "o" is no knob */
    char file_o[] = "o = 3us";
    seen = 0;
    cr_expect_eq(loggp_knobs_parse_item(file_o, 0, &k, &seen, err, sizeof err), -1);
}

/* The knob file's text keeps its NUL in a 16384-byte buffer: 16383 bytes are the most it takes. */
static char *comment_text(size_t bytes)
{
    char *text = malloc(bytes + 1);
    cr_assert_not_null(text);
    memset(text, '#', bytes);
    for (size_t i = 79; i < bytes; i += 80)
        text[i] = '\n';
    text[bytes] = '\0';
    return text;
}

Test(knob_store, the_largest_text_taken_and_one_byte_more)
{
    loggp_knobs k = {0};
    char err[256] = "";
    char *text = comment_text(16383);
    cr_expect_eq(loggp_knobs_parse_text(text, &k, err, sizeof err), 0, "16383 bytes: %s", err);
    free(text);
    text = comment_text(16384);
    cr_expect_eq(loggp_knobs_parse_text(text, &k, err, sizeof err), -1, "16384 bytes taken");
    cr_expect(strstr(err, "larger than 16383 bytes"), "the limit it names is the largest it takes: %s", err);
    free(text);
}

Test(knob_store, the_largest_file_loaded_and_one_byte_more, .init = make_dir, .fini = remove_dir)
{
    loggp_knobs k = {0};
    char err[512] = "";
    int exists = 0;
    cr_assert_eq(loggp_knobs_save(path, &k, err, sizeof err), 0, "%s", err);
    for (size_t bytes = 16383; bytes <= 16384; bytes++) {
        char *text = comment_text(bytes);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs(text, f);
        fclose(f);
        free(text);
        int rc = loggp_knobs_load(path, &k, &exists, err, sizeof err);
        if (bytes == 16383) {
            cr_expect_eq(rc, 0, "a file of 16383 bytes: %s", err);
        } else {
            cr_expect_eq(rc, -1, "a file of 16384 bytes loaded");
            cr_expect(strstr(err, "larger than 16383 bytes"), "%s", err);
        }
    }
}
