"""The long differential fuzz against NumPy (tests/fuzz/chains.py): N random op chains, each run eager,
compiled with static shapes and compiled with dynamic dims (called at the declared sizes, then at other sizes of
the ranges); prints counts per mode and outcome, refusals by
cause, and every failure with its seed (rerun one with --seed S --cases 1).

    uv run python scripts/fuzz.py --cases 10000            # the long run (figures: docs/guides/reliability.rst)
    uv run python scripts/fuzz.py --cases 200 --modes eager
    uv run python scripts/fuzz.py --cases 10000 --minutes 15    # as many as fit in 15 minutes
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fuzz"))
warnings.simplefilter("ignore")

import chains  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=0, help="first case's seed (case i uses seed + i)")
    parser.add_argument("--modes", nargs="+", default=list(chains.MODES), choices=chains.MODES)
    parser.add_argument(
        "--minutes", type=float, default=None, help="stop after this long (the cases done are reported)"
    )
    parser.add_argument("--show", type=int, default=20, help="failures to print in full")
    args = parser.parse_args()
    counts: "collections.Counter[tuple]" = collections.Counter()
    causes: "collections.Counter[str]" = collections.Counter()
    failures = []
    start = time.perf_counter()
    done = 0
    for i in range(args.cases):
        if args.minutes is not None and time.perf_counter() - start > 60 * args.minutes:
            break
        done += 1
        seed = args.seed + i
        case = chains.draw_case(chains.Draw.from_random(random.Random(seed)))
        for mode in args.modes:
            outcome, what = chains.check(case, mode)
            counts[(mode, outcome)] += 1
            if what == "called at two sizes":
                counts[(mode, "two-sizes")] += 1
            if outcome == "refusal":
                causes[what] += 1
            elif outcome != "match":
                failures.append((seed, mode, outcome, what, case))
                if len(failures) <= args.show:
                    print(f"[seed {seed}] {mode}: {outcome}: {what}\n    {case}", flush=True)
        if (i + 1) % 500 == 0:
            print(f"... {i + 1} cases, {len(failures)} failures, {time.perf_counter() - start:.0f} s", flush=True)
    elapsed = time.perf_counter() - start
    print(f"\n{done} cases (seeds {args.seed}..{args.seed + done - 1}) x {len(args.modes)} modes in {elapsed:.0f} s")
    for mode in args.modes:
        row = {o: counts[(mode, o)] for o in ("match", "refusal", "mismatch", "raw", "bad-refusal", "bad-report")}
        print(
            f"  {mode:8s} "
            + "  ".join(f"{k}={v}" for k, v in row.items())
            + (f"  (matched at a second size: {counts[(mode, 'two-sizes')]})" if mode == "dynamic" else "")
        )
    print("refusals by cause (all modes):")
    for cause, n in causes.most_common():
        print(f"  {n:6d}  {cause}")
    print(f"failures: {len(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
