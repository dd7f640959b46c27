"""Workload 8 - ``tp.Executable.load`` in a new process against a fresh ``tp.compile``, for GPT-2 (12 layers,
124M parameters, batch 1, sequence 128, float32, random weights) and a ResNet-18 (1x3x224x224, float32, the
tripy model of ``peers/convnet.py``), both static-shape as deployments compile them.

Every measurement runs in a process of its own (the persistent disk cache off), as a deployment starts:
``tp.compile`` of the model, then ``Executable.load`` of the saved file with its compiled code (the default),
and of the same file with the compiled code left out (the StableHLO only: what load costs on another
compiler or host, and what it cost before the compiled code was saved). Each load is timed with its first
call, and its XLA compilations are counted (``tripy_backend.compilation_count``). The artifact's size is
reported with and without the compiled code.

``tp.compile`` is timed with the model's weights already in memory; a load reads them from the file and
checks them (SHA-256) first. For GPT-2 (650 MB of weights, the transposed embedding included) that
reading dominates the load; the compile it saves is the difference between the two loads.

    uv run python benchmarks/load_time.py [--quick]

Target: load compiles nothing (0 compilations at load and first call).
"""

from __future__ import annotations

import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from typing import Any, Dict, List

import numpy as np

from _harness import Row

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {"gpt2": "GPT-2 {layers} layers (B=1, T=128)", "resnet18": "ResNet-18 (1x3x224x224)"}


def _model(name: str, quick: bool) -> tuple:
    """(tp.Module with random weights, its input as a NumPy array)."""
    if name == "gpt2":
        sys.path.insert(0, os.path.join(HERE, "..", "examples", "gpt2"))
        from model import GPT, GPTConfig, random_state_dict

        config = GPTConfig(n_layer=2 if quick else 12)
        model = GPT(config)
        model.load_state_dict(random_state_dict(config, seed=0))
        return model, np.random.default_rng(0).integers(0, config.vocab_size, size=(1, 128)).astype(np.int32)
    sys.path.insert(0, os.path.join(HERE, "peers"))
    from convnet import ResNet18, random_weights

    model = ResNet18()
    model.load_state_dict(random_weights(model))
    return model, np.random.default_rng(1).normal(size=(1, 3, 224, 224)).astype(np.float32)


def _child(mode: str, name: str, path: str, quick: bool) -> Dict[str, Any]:
    """One measurement, in this (new) process."""
    import tripy as tp
    import tripy_backend

    model, x = _model(name, quick)
    tx = tp.Tensor(x)
    start = time.perf_counter()
    if mode == "compile":
        exe = tp.compile(model, args=[tp.InputInfo(x.shape, tp.int32 if x.dtype == np.int32 else tp.float32)])
        seconds = time.perf_counter() - start
        exe.save(path)
        return {"seconds": seconds}
    before = tripy_backend.compilation_count()
    exe = tp.Executable.load(path)
    loaded = time.perf_counter() - start
    np.from_dlpack(exe(tx))
    return {
        "load": loaded,
        "seconds": time.perf_counter() - start,
        "compilations": tripy_backend.compilation_count() - before,
    }


def _in_new_process(mode: str, name: str, path: str, quick: bool) -> Dict[str, Any]:
    env = dict(os.environ, TRIPY_CACHE_DIR="")
    args = [sys.executable, __file__, "--child", mode, name, path] + (["--quick"] if quick else [])
    proc = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} {name} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _without_compiled_code(src: str, dst: str) -> None:
    """A copy of the saved executable `src` with its compiled code left out (the portable StableHLO only)."""
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist() if not n.startswith("compiled/")}
    header = json.loads(members["tripy_executable.json"])
    header.pop("compiled", None)
    members["tripy_executable.json"] = json.dumps(header, indent=1).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        for n, data in members.items():
            z.writestr(n, data)
    with open(dst, "wb") as f:
        f.write(buf.getvalue())


def run(quick: bool = False) -> List[Row]:
    repeat = 1 if quick else 3
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, title in MODELS.items():
            title = title.format(layers=2 if quick else 12)
            full, portable = os.path.join(tmp, f"{name}.tpexe"), os.path.join(tmp, f"{name}-stablehlo.tpexe")
            compiles, loads, plain = [], [], []
            for r in range(repeat):  # each repeat: compile (and save), load, load from the StableHLO
                compiles.append(_in_new_process("compile", name, full, quick)["seconds"])
                _without_compiled_code(full, portable)
                loads.append(_in_new_process("load", name, full, quick))
                plain.append(_in_new_process("load", name, portable, quick))
            size, size_plain = os.path.getsize(full), os.path.getsize(portable)
            load = statistics.median(x["seconds"] for x in loads)
            counts = sorted({x["compilations"] for x in loads})
            note = (
                f"{title}: load alone {statistics.median(x['load'] for x in loads):.2f} s, "
                f"{counts} compilations (StableHLO only: {sorted({x['compilations'] for x in plain})}); "
                f"artifact {size / 1e6:.1f} MB with compiled code, {size_plain / 1e6:.1f} MB without "
                f"(+{(size - size_plain) / 1e6:.2f} MB); median of {repeat}, each in a new process"
            )
            rows.append(
                Row(
                    f"8. {title}: load + first call",
                    load,
                    {
                        "tp.compile": statistics.median(compiles),
                        "load (StableHLO only)": statistics.median(x["seconds"] for x in plain),
                    },
                    "compiles nothing",
                    reference="tp.compile",
                    kind="time",
                    note=note,
                    met_override=counts == [0],
                )
            )
    return rows


if __name__ == "__main__":
    if "--child" in sys.argv:
        i = sys.argv.index("--child")
        print(json.dumps(_child(sys.argv[i + 1], sys.argv[i + 2], sys.argv[i + 3], "--quick" in sys.argv)))
    else:
        from run_all import print_table

        print_table(run(quick="--quick" in sys.argv))
