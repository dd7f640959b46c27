"""``tp.visualize``: a program's graphs (``graphs.py``) in Google's Model Explorer, a local web app."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Union

from tripy_backend.profiling import Profile
from tripy_flatir import stack_info as _stack
from tripy_flatir.exceptions import raise_error
from tripy_flatir.mlir_utils import bytecode
from tripy_trace.trace import Trace
from tripy_frontend import graphs
from tripy_frontend.compiler.executable import Executable
from tripy_frontend.export import public_api
from tripy_frontend.tensor import Tensor

INSTALL = "pip install 'tripy-inference[visualize]'"


@public_api(document_under="logging")
def visualize(
    program: Union[Executable, Tensor, Sequence[Tensor]],
    *,
    profile: Optional[Profile] = None,
    save_to: Optional[str] = None,
    host: str = "localhost",
    port: int = 8080,
    open_browser: bool = True,
) -> str:
    """Show a program as graphs in Model Explorer (Google's graph viewer, a web app that runs locally; the
    ``visualize`` extra installs it: ``pip install 'tripy-inference[visualize]'``).

    `program` is tensors not evaluated yet (the graph that computes them: its Trace, FlatIR and StableHLO, one
    graph each) or a compiled :class:`tripy.Executable` (its StableHLO). Each node is an op, with each output's
    shape and data type and the line of your code it came from; the nodes of one line are grouped (a layer
    named after the file and line: expand it to see its ops). With a `profile` of the executable
    (:func:`tripy.profile`), StableHLO nodes are colored by XLA's time per call: each XLA operation's time
    is on the node of its product or convolution, or else of its last op (the other ops fused into it show none).

    By default it starts Model Explorer's server at ``http://host:port`` and opens it in a browser, and runs
    until interrupted (Ctrl+C). On a remote machine pass ``open_browser=False`` (and a `port`; forward it with
    ``ssh -L``). With `save_to` it only writes the graphs (``graphs.json``, and ``node_data.json`` for a profile)
    into that folder: Model Explorer opens them (``model-explorer graphs.json --node_data_paths=node_data.json``),
    and this needs no extra.

    Args:
        program: Tensors not evaluated yet, or an executable.
        profile: A profile of the executable, shown on its nodes.
        save_to: A folder to write the graphs into instead of showing them.
        host: Where Model Explorer's server listens.
        port: Its port.
        open_browser: Whether to open the page in a browser.

    Returns:
        The folder the graphs were written to.

    .. code-block:: python

        import os
        import tempfile

        x = tp.ones((4, 8))
        y = tp.relu(x @ tp.ones((8, 2)))
        folder = tp.visualize(y, save_to=tempfile.mkdtemp())
        assert os.listdir(folder) == ["graphs.json"]
    """
    levels = _graphs(program)
    data = _overlay(profile, levels)
    folder = save_to if save_to is not None else tempfile.mkdtemp(prefix="tripy-visualize-")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "graphs.json"), "w") as f:
        json.dump({"label": "tripy", "graphs": levels}, f)  # (a collection: Model Explorer opens it as a file too)
    if data is not None:
        with open(os.path.join(folder, "node_data.json"), "w") as f:
            json.dump(data, f)
    if save_to is None:
        serve(folder, host, port, open_browser)
    return folder


def _graphs(program: Any) -> List[Dict[str, Any]]:
    """The graphs of each level of `program` (see ``visualize``)."""
    if isinstance(program, Executable):
        return [graphs.stablehlo_graph(program._module_bytes)]
    tensors = [program] if isinstance(program, Tensor) else list(program)
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        raise_error("tp.visualize takes a tripy.Executable, a tripy.Tensor or a list of them.", _stack.capture())
    trace = Trace([t.trace_tensor for t in tensors])
    if all(op.is_input for op in trace.ops):
        raise_error(
            "tp.visualize: these tensors are evaluated already, so no graph computes them any more.",
            _stack.capture(),
            [
                "Visualize the tensors before printing or evaluating them, or compile the "
                "function with tp.compile and visualize the executable."
            ],
        )
    flat = trace.to_flat_ir()
    return [graphs.trace_graph(trace), graphs.flat_ir_graph(flat), graphs.stablehlo_graph(bytecode(flat.to_mlir()))]


def _overlay(profile: Optional[Profile], levels: List[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """Model Explorer's node data for `profile` on the StableHLO graph (None without a profile)."""
    if profile is None:
        return None
    data = graphs.node_data(profile, ["StableHLO"])
    if profile.ops_us > 0 and graphs.profiled_nodes(data, levels) == 0:  # (0: an XLA with no per-op times)
        raise_error(
            "tp.visualize: the profile names none of this program's ops.",
            _stack.capture(),
            ["A profile overlays the executable it was made of: tp.visualize(exe, profile=tp.profile(exe, ...))."],
        )
    return data


def serve(folder: str, host: str, port: int, open_browser: bool) -> None:
    """Start Model Explorer's server on the graphs in `folder` (runs until interrupted)."""
    try:
        import model_explorer  # (an optional dependency: the ``visualize`` extra)
    except ImportError:
        raise_error(
            "tp.visualize needs Model Explorer, which is not installed.",
            _stack.capture(),
            [f"Install it with: {INSTALL}", f"or write the graphs with save_to=... (they are in {folder})."],
        )
    config = model_explorer.config()
    with open(os.path.join(folder, "graphs.json")) as f:  # (as its visualize_pytorch adds the graphs it converts)
        config.graphs_list.append(f.read())
    config.model_sources.append({"url": f"graphs://tripy/{len(config.graphs_list) - 1}"})
    if os.path.exists(os.path.join(folder, "node_data.json")):
        with open(os.path.join(folder, "node_data.json")) as f:
            config.add_node_data("XLA time per call (us)", f.read())
    model_explorer.visualize_from_config(config, host=host, port=port, no_open_in_browser=not open_browser)
