"""Portable programs: a StableHLO module as a versioned artifact (StableHLO's VHLO serialization) that
later versions of the compiler stack can still read, so saved executables outlive a tripy upgrade."""

from __future__ import annotations

from typing import Tuple

from tripy_backend import _xla
from tripy_flatir.mlir_utils import bytecode, context


def target_version() -> str:
    """The StableHLO version artifacts are written at: about 12 weeks old, so a slightly older tripy can
    read them too (newer ones always can, within StableHLO's compatibility window)."""
    from jax.extend.mlir.dialects import stablehlo

    try:
        req = stablehlo.StablehloCompatibilityRequirement.WEEK_12
        return str(stablehlo.get_version_from_compatibility_requirement(req))
    except Exception:  # older bindings
        return str(stablehlo.get_current_version())


def serialize(module_bytes: bytes) -> Tuple[bytes, str]:
    """(artifact, StableHLO version it was written at) for a module's bytecode or text."""
    version = target_version()
    return _xla.serialize_portable_artifact(module_bytes, version), version


def deserialize(artifact: bytes) -> bytes:
    """The module's bytecode from an artifact. Raises ValueError if it is not a valid artifact."""
    from jax.extend.mlir import ir

    try:
        text = _xla.deserialize_portable_artifact(artifact)
    except Exception as e:
        raise ValueError(str(e).strip()) from None
    with context():
        try:
            module = ir.Module.parse(text)
            module.operation.verify()
        except Exception as e:
            raise ValueError(f"the program does not verify: {e}") from None
        return bytecode(module)
