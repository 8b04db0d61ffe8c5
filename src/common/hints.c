#include "common/hints.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const weft_hint_def weft_hint_defs[WEFT_HINT_COUNT] = {
#define WEFT_HINT_DEF(id, name_, kind_, def_, min_, max_, choices_, doc_) \
    [WEFT_HINT_##id] = {.name = name_, .kind = WEFT_HINT_##kind_, .default_value = def_, \
                        .min = (min_), .max = (max_), .choices = choices_, .doc = doc_},
    WEFT_HINT_TABLE(WEFT_HINT_DEF)
#undef WEFT_HINT_DEF
};

static int find_hint(const char *key)
{
    for (int i = 0; i < WEFT_HINT_COUNT; i++)
        if (strcmp(weft_hint_defs[i].name, key) == 0)
            return i;
    return -1;
}

/* Index of `word` among the '|'-separated choices, or -1. */
static int choice_index(const char *choices, const char *word)
{
    size_t len = strlen(word);
    int index = 0;
    for (const char *p = choices; *p; index++) {
        const char *end = strchr(p, '|');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == len && strncasecmp(p, word, n) == 0)
            return index;
        if (!end)
            break;
        p = end + 1;
    }
    return -1;
}

static void choice_text(const char *choices, long long index, char *out, size_t size)
{
    const char *p = choices;
    for (long long i = 0; i < index && p; i++) {
        p = strchr(p, '|');
        if (p)
            p++;
    }
    if (!p) {
        snprintf(out, size, "?");
        return;
    }
    const char *end = strchr(p, '|');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    snprintf(out, size, "%.*s", (int)n, p);
}

void weft_hint_choice_text(int id, long long index, char *out, size_t size)
{
    choice_text(weft_hint_defs[id].choices, index, out, size);
}

static int parse_bool(const char *s, long long *out)
{
    static const char *truths[] = {"true", "enable", "enabled", "yes", "1", "on"};
    static const char *falses[] = {"false", "disable", "disabled", "no", "0", "off"};
    for (size_t i = 0; i < sizeof truths / sizeof *truths; i++) {
        if (strcasecmp(s, truths[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(s, falses[i]) == 0) { *out = 0; return 0; }
    }
    return -1;
}

/* Integer with an optional k/m/g suffix (powers of 1024 when `sizes`); the whole string must
 * be consumed. */
static int parse_number(const char *s, int sizes, long long *out)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s)
        return -1;
    if (sizes && *end) {
        int shift = 0;
        switch (tolower((unsigned char)*end)) {
        case 'k': shift = 10; break;
        case 'm': shift = 20; break;
        case 'g': shift = 30; break;
        default: return -1;
        }
        end++;
        if (tolower((unsigned char)*end) == 'i')
            end++;
        if (tolower((unsigned char)*end) == 'b')
            end++;
        if (v > (1LL << (62 - shift)) || v < -(1LL << (62 - shift)))
            return -1;
        v <<= shift;
    }
    while (isspace((unsigned char)*end))
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

static void canonical_text(const weft_hint_def *d, long long v, const char *s, char *out)
{
    switch (d->kind) {
    case WEFT_HINT_BOOL: snprintf(out, WEFT_HINT_STRING_MAX, "%s", v ? "true" : "false"); break;
    case WEFT_HINT_ENUM: choice_text(d->choices, v, out, WEFT_HINT_STRING_MAX); break;
    case WEFT_HINT_STRING: snprintf(out, WEFT_HINT_STRING_MAX, "%s", s); break;
    default: snprintf(out, WEFT_HINT_STRING_MAX, "%lld", v); break;
    }
}

int weft_hints_set(weft_hints *h, const char *key, const char *value, char *why, size_t why_size)
{
    int id = find_hint(key);
    if (id < 0)
        return 1;
    const weft_hint_def *d = &weft_hint_defs[id];
    long long v = 0;
    switch (d->kind) {
    case WEFT_HINT_SIZE:
    case WEFT_HINT_INT:
        if (parse_number(value, d->kind == WEFT_HINT_SIZE, &v) != 0) {
            snprintf(why, why_size, "hint %s=\"%s\": not a%s number", key, value,
                     d->kind == WEFT_HINT_SIZE ? " byte" : "n integer");
            return -1;
        }
        if (v < d->min || v > d->max) {
            snprintf(why, why_size, "hint %s=%s: out of range [%lld, %lld]", key, value, d->min,
                     d->max);
            return -1;
        }
        break;
    case WEFT_HINT_BOOL:
        if (parse_bool(value, &v) != 0) {
            snprintf(why, why_size, "hint %s=\"%s\": expected true or false", key, value);
            return -1;
        }
        break;
    case WEFT_HINT_ENUM: {
        int index = choice_index(d->choices, value);
        if (index < 0) {
            snprintf(why, why_size, "hint %s=\"%s\": expected one of %s", key, value, d->choices);
            return -1;
        }
        v = index;
        break;
    }
    case WEFT_HINT_STRING:
        if (strlen(value) >= WEFT_HINT_STRING_MAX) {
            snprintf(why, why_size, "hint %s: value longer than %d bytes", key,
                     WEFT_HINT_STRING_MAX - 1);
            return -1;
        }
        break;
    }
    h->value[id] = v;
    canonical_text(d, v, value, h->text[id]);
    return 0;
}

static void warn(const char *path, const char *why)
{
    fprintf(stderr, "weft: warning: %s%s%s (ignored; previous value kept)\n", path ? path : "",
            path ? ": " : "", why);
}

void weft_hints_init(weft_hints *h)
{
    char why[512];
    memset(h, 0, sizeof *h); /* whole arrays defined: the struct is broadcast as bytes */
    for (int i = 0; i < WEFT_HINT_COUNT; i++) {
        int rc = weft_hints_set(h, weft_hint_defs[i].name, weft_hint_defs[i].default_value, why,
                                sizeof why);
        (void)rc; /* the table's own defaults always parse: tests/unit/hints checks it */
    }
    const char *env = getenv("WEFT_HINTS");
    if (env && *env) {
        char *copy = strdup(env), *save = NULL;
        for (char *item = strtok_r(copy, ";", &save); item; item = strtok_r(NULL, ";", &save)) {
            char *eq = strchr(item, '=');
            if (!eq) {
                snprintf(why, sizeof why, "WEFT_HINTS item \"%s\" has no '='", item);
                warn(NULL, why);
                continue;
            }
            *eq = '\0';
            if (weft_hints_set(h, item, eq + 1, why, sizeof why) < 0)
                warn("WEFT_HINTS", why);
        }
        free(copy);
    }
    const char *pass = getenv("WEFT_PASSTHROUGH");
    if (pass && *pass && strcmp(pass, "0") != 0)
        weft_hints_set(h, "weft_passthrough", "true", why, sizeof why);
}

void weft_hints_apply_info(weft_hints *h, MPI_Info info, const char *path, int report)
{
    if (info == MPI_INFO_NULL)
        return;
    int nkeys = 0;
    MPI_Info_get_nkeys(info, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1], why[512];
        int flag = 0;
        MPI_Info_get_nthkey(info, i, key);
        MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
        if (!flag)
            continue;
        if (weft_hints_set(h, key, value, why, sizeof why) < 0 && report)
            warn(path, why);
    }
}

void weft_hints_adopt_rank0(weft_hints *h, const weft_hints *rank0, int rank, const char *path)
{
    for (int i = 0; i < WEFT_HINT_COUNT; i++) {
        if (h->value[i] == rank0->value[i] && strcmp(h->text[i], rank0->text[i]) == 0)
            continue;
        const char *quote = weft_hint_defs[i].kind == WEFT_HINT_STRING ? "\"" : "";
        fprintf(stderr,
                "weft: %s: hint %s is %s%s%s on rank %d but %s%s%s on rank 0; using rank 0's "
                "(the standard requires the same value on every rank)\n",
                path, weft_hint_defs[i].name, quote, h->text[i], quote, rank, quote,
                rank0->text[i], quote);
        break; /* one line per rank and call: the first difference says enough */
    }
    if (h != rank0)
        *h = *rank0;
}

void weft_hints_make_uniform(weft_hints *h, MPI_Comm comm, const char *path)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    weft_hints rank0 = *h;
    MPI_Bcast(&rank0, (int)sizeof rank0, MPI_BYTE, 0, comm);
    weft_hints_adopt_rank0(h, &rank0, rank, path);
}

int weft_hints_to_info(const weft_hints *h, MPI_Info *info)
{
    int rc = MPI_Info_create(info);
    for (int i = 0; rc == MPI_SUCCESS && i < WEFT_HINT_COUNT; i++)
        rc = MPI_Info_set(*info, weft_hint_defs[i].name, h->text[i]);
    return rc;
}

void weft_hints_write_markdown(FILE *out)
{
    static const char *kinds[] = {"size", "integer", "boolean", "choice", "string"};
    fprintf(out, "| hint | type | default | valid values | what it does |\n");
    fprintf(out, "|---|---|---|---|---|\n");
    for (int i = 0; i < WEFT_HINT_COUNT; i++) {
        const weft_hint_def *d = &weft_hint_defs[i];
        char range[128];
        switch (d->kind) {
        case WEFT_HINT_SIZE:
        case WEFT_HINT_INT: snprintf(range, sizeof range, "%lld … %lld", d->min, d->max); break;
        case WEFT_HINT_BOOL: snprintf(range, sizeof range, "true, false"); break;
        case WEFT_HINT_ENUM: snprintf(range, sizeof range, "%s", d->choices); break;
        default: snprintf(range, sizeof range, "text"); break;
        }
        for (char *p = range; *p; p++)
            if (*p == '|')
                *p = ',';
        fprintf(out, "| `%s` | %s | `%s` | %s | %s |\n", d->name, kinds[d->kind], d->default_value,
                range, d->doc);
    }
}
