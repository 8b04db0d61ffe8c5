"""The order of runs: repetitions interleaved across implementations, never N in a row.

Repetition is the outermost loop, so every implementation's rep k of a case runs before any
rep k+1; inside a repetition the implementation order is rotated by one per repetition, so no
implementation is always first (cold) or always after the same neighbour.
"""


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


def make_plan(cases, dirs, ranks_list, impls, reps):
    runs = []
    for rep in range(reps):
        for case in cases:
            usable = [i for i in impls if i.supports(case["pattern"])]
            if not usable:
                continue
            k = rep % len(usable)
            order = usable[k:] + usable[:k]
            for d in dirs:
                for ranks in ranks_list:
                    for impl in order:
                        runs.append(Run(case, d, ranks, impl, rep, reps))
    for i, r in enumerate(runs):
        r.index = i
    return runs
