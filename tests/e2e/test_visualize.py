"""tp.visualize: a program's Trace, FlatIR and StableHLO as Model Explorer graphs, with a profile's times on them.

The graphs are checked as data (no extra needed); Model Explorer's page is checked in a headless Chromium where
Model Explorer, selenium and Chromium are installed (scripts/visualize-deps, docs/check): skipped otherwise, unless
TRIPY_REQUIRE_VISUALIZE_TESTS=1 (CI), which makes a missing one a failure."""

import inspect
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import tripy as tp
from tripy_backend import _xla
from tripy.serve import command


def layer(x, w):
    y = x @ w
    return tp.tanh(y) + 1.0


PRODUCT_LINE = inspect.getsourcelines(layer)[1] + 1


def _graphs(folder):
    with open(os.path.join(folder, "graphs.json")) as f:
        return {g["id"]: {n["id"]: n for n in g["nodes"]} for g in json.load(f)["graphs"]}


def _attr(node, key):
    return next(a["value"] for a in node["attrs"] if a["key"] == key)


def test_the_graph_of_tensors_has_every_level(tmp_path):
    x, w = tp.Tensor(np.ones((4, 8), np.float32)), tp.Tensor(np.ones((8, 2), np.float32))
    out = layer(x, w)
    graphs = _graphs(tp.visualize(out, save_to=str(tmp_path)))
    assert list(graphs) == ["Trace", "FlatIR", "StableHLO"]
    products = {
        level: [n for n in graphs[level].values() if "DotOp" in n["id"] or "matrix" in n["label"]] for level in graphs
    }
    for level, (product,) in products.items():
        assert _attr(product, "source") == f"{__file__}:{PRODUCT_LINE}  y = x @ w", level
        assert product["namespace"] == f"test_visualize.py:{PRODUCT_LINE}"
        shape = {a["key"]: a["value"] for a in product["outputsMetadata"][0]["attrs"]}
        assert shape["shape"] == "[4, 2]" and shape["dtype"] in ("float32", "f32"), level
        assert len(product["incomingEdges"]) == 2
    assert products["FlatIR"][0]["id"] == products["StableHLO"][0]["id"]  # (one name at both levels)
    tanh = next(n for n in graphs["StableHLO"].values() if n["label"] == "stablehlo.tanh")
    assert tanh["incomingEdges"][0]["sourceNodeId"] == products["StableHLO"][0]["id"]
    assert np.from_dlpack(out).tolist() == [[pytest.approx(np.tanh(8.0) + 1.0)] * 2] * 4  # (still computes)


def test_a_profile_colors_the_executable_nodes(tmp_path):
    exe = tp.compile(layer, args=[tp.InputInfo((256, 256), tp.float32), tp.InputInfo((256, 256), tp.float32)])
    x = tp.ones((256, 256))
    prof = tp.profile(exe, x, x, calls=3)
    folder = tp.visualize(exe, profile=prof, save_to=str(tmp_path))
    graphs = _graphs(folder)
    assert list(graphs) == ["StableHLO"]
    with open(os.path.join(folder, "node_data.json")) as f:
        results = json.load(f)["StableHLO"]["results"]
    product = next(n for n in graphs["StableHLO"] if n.endswith("= DotOp"))
    assert set(results) <= set(graphs["StableHLO"])
    expected = sum(r.time_us for c in prof.calls for r in c.ops if r.op.main == product) / 3
    if prof.ops_us:  # (XLA:CPU's classic runtime, jaxlib < 0.8, reports no per-op times: nothing to show)
        assert results[product]["value"] == pytest.approx(expected, abs=1e-3) and expected > 0
        assert sum(r["value"] for r in results.values()) == pytest.approx(prof.ops_us / 3, rel=1e-3)


def test_bad_programs_are_reported(tmp_path):
    exe = tp.compile(layer, args=[tp.InputInfo((8, 8), tp.float32), tp.InputInfo((8, 8), tp.float32)])
    done = tp.ones((2, 2))
    done.eval()
    with pytest.raises(tp.TripyException, match="evaluated already"):
        tp.visualize(done, save_to=str(tmp_path))
    with pytest.raises(tp.TripyException, match="takes a tripy.Executable, a tripy.Tensor"):
        tp.visualize([], save_to=str(tmp_path))
    other = tp.compile(lambda a: tp.exp(a), args=[tp.InputInfo((8, 8), tp.float32)])
    prof = tp.profile(other, tp.ones((8, 8)), calls=1)
    if prof.ops_us:
        with pytest.raises(tp.TripyException, match="the profile names none of this program's ops"):
            tp.visualize(exe, profile=prof, save_to=str(tmp_path))


def test_without_model_explorer_it_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "model_explorer", None)  # (import model_explorer raises ImportError)
    with pytest.raises(tp.TripyException, match=r"pip install 'tripy-inference\[visualize\]'"):
        tp.visualize(layer(tp.ones((2, 2)), tp.ones((2, 2))))


SERVE = textwrap.dedent("""
    import sys
    import tripy as tp

    def layer(x, w):
        y = x @ w
        return tp.tanh(y) + 1.0

    exe = tp.compile(layer, args=[tp.InputInfo((128, 128), tp.float32), tp.InputInfo((128, 128), tp.float32)])
    x = tp.ones((128, 128))
    tp.visualize(exe, profile=tp.profile(exe, x, x, calls=3), host="127.0.0.1", port=int(sys.argv[1]),
                 open_browser=False)
""")


def _need(module):
    if os.environ.get("TRIPY_REQUIRE_VISUALIZE_TESTS") == "1":
        __import__(module)  # (CI: a missing dependency fails; scripts/visualize-deps installs it)
    return pytest.importorskip(module)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(tmp_path):
    _need("model_explorer")
    script = tmp_path / "serve.py"
    script.write_text(SERVE)
    process = subprocess.Popen(
        [sys.executable, str(script), str(_free_port())], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        url, printed = None, []
        deadline = time.monotonic() + 120
        while url is None and time.monotonic() < deadline and process.poll() is None:
            printed.append(process.stdout.readline())
            url = printed[-1].strip() if printed[-1].startswith("http://127.0.0.1") else None
        assert url is not None, f"Model Explorer did not start (exit code {process.poll()}):\n{''.join(printed)}"
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


PAGE = "return document.body.innerText"


def test_model_explorer_shows_the_nodes_and_their_times(server, tmp_path):
    _need("selenium")
    chromium, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if chromium is None or driver_path is None:
        if os.environ.get("TRIPY_REQUIRE_VISUALIZE_TESTS") == "1":
            pytest.fail("chromium and chromedriver are needed (docs/check installs them)")
        pytest.skip("chromium and chromedriver are not installed")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs"))
    from check import make_driver  # (docs/check.py: the site check's headless Chromium)

    driver = make_driver(chromium, driver_path, str(tmp_path / "chromium"))
    try:
        driver.get(server)
        deadline, text = time.monotonic() + 60, ""
        while "stablehlo.dot_general" not in text and time.monotonic() < deadline:
            time.sleep(1)
            text = driver.execute_script(PAGE)
        driver.save_screenshot(str(tmp_path / "model_explorer.png"))
    finally:
        driver.quit()
    count = re.search(r"op node count\s+(\d+)", text)
    assert "StableHLO" in text and count is not None and count.group(1) == "8"  # (2 arguments, 5 ops, the return)
    assert "XLA time per call (us)" in text  # (the profile's overlay, and its value on the product's node)
    time_us = re.search(r"\d+\s+stablehlo\.dot_general\s+([\d.]+)", text)
    if not _xla.has_classic_cpu_runtime():  # (jaxlib < 0.8 may run it as one function: no per-op times)
        assert time_us is not None and float(time_us.group(1)) > 0, text


def test_the_tripy_command_writes_a_saved_executable_graph(tmp_path, capsys):
    exe = tp.compile(layer, args=[tp.InputInfo((8, 8), tp.float32), tp.InputInfo((8, 8), tp.float32)])
    exe.save(str(tmp_path / "layer.tpexe"))
    command(["visualize", str(tmp_path / "layer.tpexe"), "--save-to", str(tmp_path / "graph")])
    assert f"the graph is in {tmp_path / 'graph'}" in capsys.readouterr().out
    nodes = _graphs(tmp_path / "graph")["StableHLO"].values()
    (product,) = [n for n in nodes if n["label"] == "stablehlo.dot_general"]
    assert _attr(product, "source").startswith(f"{__file__}:{PRODUCT_LINE}")
    with pytest.raises(SystemExit, match="tripy visualize: .*missing.tpexe': the file does not exist"):
        command(["visualize", str(tmp_path / "missing.tpexe"), "--save-to", str(tmp_path / "none")])
    command(["--help"])
    assert "visualize  show a saved executable's graph" in capsys.readouterr().out
