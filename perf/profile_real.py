"""Where chapter 14's time goes (issue 45): its comparison on the real checkpoint's TOFU target,
with every evaluation and every unlearning run timed as it happens, then the totals by kind.

    .venv/bin/python perf/profile_real.py            # the mini profile's chapter 14 (needs make models)
    .venv/bin/python perf/profile_real.py --profile smoke --max-steps 2

It runs through the run store like the chapter, so what is stored already is read back at no cost:
profile from an empty store (or another profile's) to see the work itself. One torch thread, as
the book's kernels. Prints one line a step and a table at the end; writes nothing else.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import defaultdict

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="mini")
    parser.add_argument("--max-steps", type=int, default=0, help="cap every run (0: each recipe's own budget)")
    args = parser.parse_args()
    os.environ.setdefault("UNLEARNING_PROGRESS", "0")
    torch.set_num_threads(1)
    from experiments.lab import REAL_BASE, Lab, Protocol, eval_config
    from experiments.real_comparison import curation_check, real_comparison

    spent = defaultdict(list)

    def timed(name: str):
        original = getattr(Lab, name)

        def wrapper(self, *positional, **named):
            begin = time.perf_counter()
            out = original(self, *positional, **named)
            seconds = time.perf_counter() - begin
            what = getattr(positional[0], "method", positional[0]) if name == "run_spec" else positional[1]
            spent[name].append(seconds)
            print(f"{name} {seconds:7.1f} s  {what}", flush=True)
            return out
        setattr(Lab, name, wrapper)

    timed("evaluate")
    timed("run_spec")
    lab = Lab.for_profile(args.profile)
    begin = time.perf_counter()
    curation_check(lab, lab.model(REAL_BASE), 0)
    spent["curation check"].append(time.perf_counter() - begin)
    real_comparison(lab, "135m", "forget10", ["GradDiff", "NPO+KLR", "SimNPO+GD", "MASC"],
                    eval_config("tofu", "forget10"), protocol=Protocol(), rmu_grid={}, with_base=False,
                    max_steps=args.max_steps, base_dir=lab.model(REAL_BASE))
    print("\n| part | calls | seconds |\n|---|---:|---:|")
    for name, values in spent.items():
        print(f"| {name} | {len(values)} | {sum(values):.0f} |")


if __name__ == "__main__":
    main()
