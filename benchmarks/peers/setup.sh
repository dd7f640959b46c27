#!/usr/bin/env bash
# Makes the peers' environment for the benchmarks in benchmarks/peers/: a separate virtual environment
# (plain pip, Python 3.10+) with tripy's workspace packages (editable) and the engines users would pick
# instead: PyTorch (CPU wheel), ONNX Runtime (+ onnx for the export), OpenVINO (where it installs) and JAX.
# PyTorch never enters uv.lock: from PyPI under uv it is a multi-GB CUDA build.
#
#   bash benchmarks/peers/setup.sh              # makes benchmarks/peers/.venv
#   benchmarks/peers/.venv/bin/python benchmarks/peers/gpt2.py
#
# A peer that fails to install is reported by the benchmarks as "n/a (reason)"; the rest still run.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="${PEERS_VENV:-$here/.venv}"
python="${PYTHON:-python3}"

"$python" -m venv "$venv" || exit 1
pip="$venv/bin/pip"
"$pip" install --quiet --upgrade pip
# tripy from this checkout, with the jax/jaxlib pin of uv.lock.
"$pip" install --quiet "jax==0.6.2" "jaxlib==0.6.2" numpy \
    -e "$root/packages/tripy-flatir" -e "$root/packages/tripy-trace" -e "$root/packages/tripy-backend" \
    -e "$root/packages/tripy-frontend" -e "$root/packages/tripy-importers" -e "$root/packages/tripy" || exit 1
"$pip" install --quiet safetensors || echo "setup.sh: safetensors did not install"
# Peers: each one optional.
# (On a machine without a local CPU wheel, add --index-url https://download.pytorch.org/whl/cpu.)
"$pip" install --quiet "torch==${TORCH_VERSION:-2.13.0}" || echo "setup.sh: torch did not install"
"$pip" install --quiet transformers || echo "setup.sh: transformers did not install (importers.py needs it)"
"$pip" install --quiet onnxruntime onnx onnxscript || echo "setup.sh: onnxruntime/onnx/onnxscript did not install"
"$pip" install --quiet openvino || echo "setup.sh: openvino did not install (optional: its columns show n/a)"
"$venv/bin/python" - <<'PY'
import importlib
for name in ("tripy", "jax", "torch", "onnxruntime", "onnx", "openvino", "safetensors"):
    try:
        m = importlib.import_module(name)
        print(f"{name:12s} {getattr(m, '__version__', '?')}")
    except Exception as e:
        print(f"{name:12s} missing ({type(e).__name__}: {e})")
PY
