"""The order of runs: repetitions interleaved across implementations, never N in a row.

Repetition is the outermost loop, so every implementation's rep k of a case runs before any
rep k+1.  Repetition 0 runs the implementations in the listed order; every later one in a
seeded random permutation, drawn anew for each case, directory and rank count, so no
implementation is always first (cold) or always after the same neighbour.  (Rotating the list
by one per repetition, as this once did, keeps every neighbour: on ext4 the two
implementations listed after the POSIX baseline, whose thousands of small writes the next run
pays for, were slow in every repetition.)
"""
import random


class Run:
    __slots__ = ("index", "case", "dir", "ranks", "impl", "rep", "reps")

    def __init__(self, case, dir, ranks, impl, rep, reps):
        self.index = 0
        self.case, self.dir, self.ranks, self.impl, self.rep, self.reps = case, dir, ranks, impl, rep, reps

    @property
    def key(self):
        """What the repetitions of one measurement share."""
        return (self.case["name"], self.dir, self.ranks, self.impl.name)

    def label(self):
        return (f"{self.case['name']} {self.impl.name} {self.dir} np{self.ranks} "
                f"rep {self.rep + 1}/{self.reps}")


ORDER_SEED = 20261123  # fixed: the same suite gives the same plan


def make_plan(cases, dirs, ranks_list, impls, reps, seed=ORDER_SEED):
    runs = []
    for rep in range(reps):
        for case in cases:
            usable = [i for i in impls if i.supports_case(case)]
            if not usable:
                continue
            for d in dirs:
                for ranks in ranks_list:
                    order = list(usable)
                    if rep > 0:
                        random.Random(f"{seed}/{rep}/{case['name']}/{d}/{ranks}").shuffle(order)
                    for impl in order:
                        runs.append(Run(case, d, ranks, impl, rep, reps))
    for i, r in enumerate(runs):
        r.index = i
    return runs
