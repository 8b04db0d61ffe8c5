/*
 * Aggregator selection (docs/COLLECTIVE.md "Aggregators"): ROMIO's cb_config_list parsed, and
 * ranks chosen from it in list order.  Internal to the plan (plan.c); pure, no MPI calls.
 */
#ifndef WEFT_COLL_AGGREGATORS_H
#define WEFT_COLL_AGGREGATORS_H

#include "coll/plan.h"

#include <stddef.h>

/*
 * cb_config_list: "name[:N],name[:N],..." (ROMIO's syntax).  name is a host name or "*" (every
 * node); N is a positive count or "*" (all ranks of the host); no ":N" means 1.  Whitespace
 * around the tokens (names, ':', counts) is ignored.
 */
typedef struct {
    const char *name;             /* into the list text; NULL for "*" */
    size_t name_len;
    int count;                    /* ranks to take; INT_MAX for ":*" */
} config_entry;

typedef struct {
    config_entry *entry;
    int nentries;
    int names_host;               /* some entry names a host (not only "*") */
} config_list;

/* Parse `text` into *cl (entries point into text; free cl->entry).  0 when well formed, > 0
 * when malformed (cl is then empty), < 0 (-errno) when out of memory. */
int weft_config_parse(const char *text, config_list *cl);

/* Choose up to `want` aggregator ranks from the list, in list order, into out[]; returns how
 * many (0 when the list matches no rank), < 0 (-errno) when out of memory. */
int weft_select_aggregators(const weft_plan_input *in, const config_list *cl, int want,
                            int *out);

#endif
