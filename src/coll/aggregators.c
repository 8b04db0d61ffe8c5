/*
 * Aggregator selection: the cb_config_list parser and the walk that picks ranks from it
 * (aggregators.h).  Split from the plan so each reads alone; pure functions, no MPI calls.
 */
#include "coll/aggregators.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_space(const char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    return s;
}

/* 0 = parsed, 1 = malformed, -ENOMEM.  The entries point into `text`. */
int weft_config_parse(const char *text, config_list *cl)
{
    memset(cl, 0, sizeof *cl);
    size_t commas = 0;
    for (const char *c = text; *c; c++)
        commas += *c == ',';
    cl->entry = malloc((commas + 1) * sizeof *cl->entry);
    if (!cl->entry)
        return -ENOMEM;
    const char *s = text;
    for (;;) {
        config_entry e = {NULL, 0, 1};
        s = skip_space(s);
        const char *name = s;
        while (*s && *s != ',' && *s != ':' && !isspace((unsigned char)*s))
            s++;
        size_t len = (size_t)(s - name);
        if (len == 0)
            return 1;                              /* "", ",", ":2", "a,,b", "a," */
        if (len == 1 && name[0] == '*') {
            e.name = NULL;
        } else {
            if (memchr(name, '*', len))
                return 1;                          /* no globbing: "node*" is a mistake */
            e.name = name;
            e.name_len = len;
            cl->names_host = 1;
        }
        s = skip_space(s);
        if (*s == ':') {
            s = skip_space(s + 1);
            if (*s == '*') {
                e.count = INT_MAX;
                s++;
            } else {
                if (!isdigit((unsigned char)*s))
                    return 1;                      /* "a:", "a::1", "a:x", "a:-1" */
                long long n = 0;
                while (isdigit((unsigned char)*s)) {
                    n = n * 10 + (*s - '0');
                    if (n > INT_MAX)
                        n = INT_MAX;               /* more than any host has: all of it */
                    s++;
                }
                if (n < 1)
                    return 1;                      /* "a:0" asks for nothing: a mistake */
                e.count = (int)n;
            }
            s = skip_space(s);
        }
        cl->entry[cl->nentries++] = e;
        if (*s == '\0')
            return 0;
        if (*s != ',')
            return 1;                              /* "a:1x", "a b" */
        s++;
    }
}

/* Case-insensitive ASCII hash and comparison of host names (DNS names ignore case). */
static uint64_t name_hash(const char *s, size_t len)
{
    uint64_t h = 14695981039346656037ULL;          /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint64_t)tolower((unsigned char)s[i])) * 1099511628211ULL;
    return h;
}

static int name_equals(const char *s, size_t len, const char *node)
{
    for (size_t i = 0; i < len; i++)
        if (node[i] == '\0' || tolower((unsigned char)s[i]) != tolower((unsigned char)node[i]))
            return 0;
    return node[len] == '\0';
}

/*
 * Walk the list and choose aggregators, in list order, writing at most `want` ranks to out[];
 * returns how many (0 when the list matches no rank).
 *   - "*:N": up to N more not-yet-chosen ranks of every node, round-robin: a pass takes the
 *     lowest remaining rank of each node in node order, then the next pass, ... (N passes).
 *   - "host:N": up to N not-yet-chosen ranks of the node(s) named host, round-robin over
 *     those nodes (in node order) the same way.
 * Ranks are always taken lowest first within a node, so a node's chosen ranks are a prefix of
 * its ranks and a cursor per node is all the state needed.  Nodes that run out are dropped
 * from the lists they are found in, once, so the walk is O(P + nnodes + entries + names).
 */
int weft_select_aggregators(const weft_plan_input *in, const config_list *cl, int want,
                            int *out)
{
    int P = in->nprocs;
    int N = in->node_of_rank ? in->nnodes : P;     /* no node information: a node per rank */
    const char *const *names = in->node_of_rank ? in->node_name : NULL;
    int *slot = calloc((size_t)N + 1, sizeof *slot); /* node n: ranks[slot[n] .. slot[n+1]) */
    int *cursor = malloc((size_t)N * sizeof *cursor); /* next not-yet-chosen slot of node n */
    int *ranks = malloc((size_t)P * sizeof *ranks);
    int *active = NULL, *link = NULL, *group_head = NULL, *group_rep = NULL, *table = NULL;
    int got = 0, rc = -ENOMEM;
    if (!slot || !cursor || !ranks)
        goto out;

    /* Counting sort of the ranks by node (stable: ascending rank within a node). */
    for (int r = 0; r < P; r++)
        slot[(in->node_of_rank ? in->node_of_rank[r] : r) + 1]++;
    for (int n = 0; n < N; n++)
        slot[n + 1] += slot[n];
    for (int n = 0; n < N; n++)
        cursor[n] = slot[n];
    for (int r = 0; r < P; r++)
        ranks[cursor[in->node_of_rank ? in->node_of_rank[r] : r]++] = r;
    for (int n = 0; n < N; n++)
        cursor[n] = slot[n];

    /* Host names: nodes sharing a name form a group, linked in node order; an open-addressing
     * table (power of two, at most half full) maps a name to its group. */
    size_t mask = 0;
    if (cl->names_host && names) {
        size_t size = 2;
        while (size < 2 * (size_t)N)
            size *= 2;
        mask = size - 1;
        table = malloc(size * sizeof *table);
        link = malloc((size_t)N * sizeof *link);
        group_head = malloc((size_t)N * sizeof *group_head);
        group_rep = malloc((size_t)N * sizeof *group_rep);
        int *group_tail = malloc((size_t)N * sizeof *group_tail);
        if (!table || !link || !group_head || !group_rep || !group_tail) {
            free(group_tail);
            goto out;
        }
        for (size_t i = 0; i < size; i++)
            table[i] = -1;
        int ngroups = 0;
        for (int n = 0; n < N; n++) {
            link[n] = -1;
            if (!names[n])
                continue;
            size_t len = strlen(names[n]);
            size_t i = (size_t)name_hash(names[n], len) & mask;
            while (table[i] >= 0 && !name_equals(names[n], len, names[group_rep[table[i]]]))
                i = (i + 1) & mask;
            if (table[i] < 0) {
                table[i] = ngroups;
                group_head[ngroups] = group_rep[ngroups] = group_tail[ngroups] = n;
                ngroups++;
            } else {
                int g = table[i];
                link[group_tail[g]] = n;
                group_tail[g] = n;
            }
        }
        free(group_tail);
    }
    if (!(active = malloc((size_t)N * sizeof *active)))
        goto out;
    int nactive = -1;                              /* the "*" node list, built when needed */

    for (int k = 0; k < cl->nentries && got < want; k++) {
        const config_entry *e = &cl->entry[k];
        if (!e->name) {
            if (nactive < 0) {
                nactive = 0;
                for (int n = 0; n < N; n++)
                    if (slot[n + 1] > slot[n])
                        active[nactive++] = n;
            }
            for (int pass = 0; pass < e->count && nactive > 0 && got < want; pass++) {
                int keep = 0;
                for (int i = 0; i < nactive && got < want; i++) {
                    int n = active[i];
                    if (cursor[n] == slot[n + 1])
                        continue;                  /* emptied by a host entry */
                    out[got++] = ranks[cursor[n]++];
                    if (cursor[n] < slot[n + 1])
                        active[keep++] = n;
                }
                nactive = keep;
            }
            continue;
        }
        if (!table)
            continue;                              /* names unknown: no host matches */
        size_t i = (size_t)name_hash(e->name, e->name_len) & mask;
        while (table[i] >= 0 && !name_equals(e->name, e->name_len, names[group_rep[table[i]]]))
            i = (i + 1) & mask;
        if (table[i] < 0)
            continue;                              /* no such host */
        int *head = &group_head[table[i]];
        int taken = 0;
        while (*head >= 0 && taken < e->count && got < want) {
            /* One pass over the group's nodes; nodes found empty are unlinked. */
            for (int *at = head; *at >= 0 && taken < e->count && got < want;) {
                int n = *at;
                if (cursor[n] == slot[n + 1]) {
                    *at = link[n];
                    continue;
                }
                out[got++] = ranks[cursor[n]++];
                taken++;
                at = &link[n];
            }
        }
    }
    rc = got;
out:
    free(slot), free(cursor), free(ranks), free(active), free(link), free(group_head);
    free(group_rep), free(table);
    return rc;
}
