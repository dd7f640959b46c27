"""Run every benchmark and print one table: workload, tripy, each peer, ratio, target.

    uv run python benchmarks/run_all.py            # everything (a few minutes)
    uv run python benchmarks/run_all.py --quick    # fewer rounds, smaller GPT-2 compile repeat
    uv run python benchmarks/run_all.py --only 1 3 # some workloads (numbers as in the table)

Peers run in the same process (interleaved with tripy, see _harness.py): NumPy, ``jax.jit`` of the
same function, and PyTorch on the CPU when it is installed. A workload whose tripy feature is not
available in this checkout is reported as "n/a (reason)" rather than stopping the run.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from typing import Callable, List, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (HERE, os.path.dirname(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from _harness import Row, fmt_time, skipped  # noqa: E402

# (number, module, title used if the module cannot run at all)
WORKLOADS: List[Tuple[str, str, str]] = [
    ("1", "eager_cache_hit", "1. eager cache hit: 10-op expression"),
    ("2", "eager_cache_miss", "2. eager cache miss: new 10-op graph, first eval"),
    ("3", "compiled_overhead", "3. compiled call overhead, tiny inputs"),
    ("4", "gpt2_compile", "4. GPT-2 (12 layers) trace + lower + compile"),
    ("5", "throughput", "5. throughput"),
    ("6", "scaling", "6. trace + lower time vs graph size"),
    ("7", "disk_cache", "7. persistent cache: compile in a new process"),
    ("8", "load_time", "8. Executable.load in a new process vs tp.compile"),
]


def run_workload(number: str, module_name: str, title: str, quick: bool) -> List[Row]:
    try:
        module = importlib.import_module(module_name)
        return list(module.run(quick=quick))
    except Exception as e:  # a missing feature (or a broken one) must not hide the other results
        reason = f"{type(e).__name__}: {summary(str(e))}"[:100]
        if os.environ.get("TRIPY_BENCH_DEBUG"):
            traceback.print_exc()
        return [skipped(title, reason)]


def summary(message: str) -> str:
    """The first line of an error message that says what went wrong (tripy's reports start with the
    location and the source line)."""
    for line in message.splitlines():
        text = line.strip()
        if text and not text.startswith(("-->", "|")) and not text.split("|")[0].strip().isdigit():
            return text
    return message.strip().splitlines()[0] if message.strip() else ""


def print_table(rows: Sequence[Row], out: Callable[[str], None] = print) -> None:
    peer_names: List[str] = []
    for r in rows:
        for p in r.peers:
            if p not in peer_names:
                peer_names.append(p)
    header = ["workload", "tripy"] + peer_names + ["ratio", "target", "met"]
    table = [header]
    notes = []
    for r in rows:
        if r.skipped:
            table.append([r.workload, f"n/a ({r.skipped})"] + [""] * (len(header) - 2))
            continue
        ratio = r.ratio
        if r.ratio_text is not None:
            ratio_text = r.ratio_text
        elif r.kind == "throughput" and ratio is not None:
            ratio_text = f"{ratio:.2f} of best"
        elif ratio is not None:
            ratio_text = f"{ratio:.2f}x {r.reference}"
        else:
            ratio_text = "-"
        met = {True: "yes", False: "NO", None: "-"}[r.met]
        table.append(
            [r.workload, fmt_time(r.tripy)]
            + [fmt_time(r.peers.get(p)) if p in r.peers else "" for p in peer_names]
            + [ratio_text, r.target, met]
        )
        if r.note:
            notes.append(f"  [{r.workload.split(':')[0]}] {r.note}")
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    widths[0] = min(widths[0], 70)
    for i, row in enumerate(table):
        cells = [row[0][:70].ljust(widths[0])] + [c.rjust(w) for c, w in zip(row[1:], widths[1:])]
        out(" | ".join(cells))
        if i == 0:
            out("-+-".join("-" * w for w in widths))
    if notes:
        out("\nNotes:")
        for n in notes:
            out(n)


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer rounds (noisier numbers)")
    parser.add_argument("--only", nargs="*", default=None, help="workload numbers to run")
    args = parser.parse_args(argv)
    import platform

    import numpy as np

    print(f"python {platform.python_version()}, numpy {np.__version__}, cpus {os.cpu_count()}", flush=True)
    rows: List[Row] = []
    for number, module_name, title in WORKLOADS:
        if args.only and number not in args.only:
            continue
        print(f"running {title} ...", file=sys.stderr, flush=True)
        rows += run_workload(number, module_name, title, args.quick)
    print()
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
