"""Differential test against NumPy: random op chains (tests/fuzz/chains.py) run eager, compiled with static
shapes and compiled with dynamic dims; each must match NumPy or raise a TripyException naming the user's line
where the reference refuses. Fixed seed (derandomize) and a bounded count here; the long run is
``uv run python scripts/fuzz.py --cases 10000``."""

import os
import sys

from hypothesis import HealthCheck, Phase, given, settings, strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chains  # noqa: E402

# No shrinking in CI (it can take minutes); a failure prints its case, and scripts/fuzz.py reruns seeds.
CI_PHASES = [Phase.explicit, Phase.reuse, Phase.generate]


@settings(
    max_examples=120,
    derandomize=True,
    deadline=None,
    database=None,
    print_blob=True,
    phases=CI_PHASES,
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_random_op_chains_match_numpy(data):
    case = chains.draw_case(chains.Draw(lambda lo, hi: data.draw(st.integers(lo, hi))))
    for mode in chains.MODES:
        outcome, what = chains.check(case, mode)
        assert outcome in ("match", "refusal"), f"{mode}: {outcome}: {what}\n{case}"


def test_the_checker_catches_a_wrong_result():
    """The comparison is not vacuous: a result off by one ulp-scaled tolerance, a NaN in the wrong place, or
    a wrong dtype is reported."""
    import numpy as np

    want = np.array([1.0, np.nan, np.inf], np.float32)
    assert chains.close(want.copy(), want) is None
    assert chains.close(np.array([1.01, np.nan, np.inf], np.float32), want) is not None
    assert chains.close(np.array([1.0, 0.0, np.inf], np.float32), want) is not None
    assert chains.close(want.astype(np.float16), want) is not None
    assert chains.close(np.array([1, 2], np.int32), np.array([1, 3], np.int32)) is not None
