"""The range plan (tripy_backend.range_plan): which buckets cover declared ranges. Pure arithmetic, no compiler."""

import math

import pytest

from tripy_backend import range_plan


def test_bounds_are_the_powers_of_two_opt_and_max():
    # (opt - 1 too, so that opt's bucket holds opt alone: its own static program)
    assert range_plan.bounds_for(1, 8, 64) == [1, 2, 4, 7, 8, 16, 32, 64]
    assert range_plan.bounds_for(1, 20, 100) == [1, 2, 4, 8, 16, 19, 20, 32, 64, 100]


def test_an_opt_of_max_keeps_the_largest_bucket_bounded():
    # (its program runs every shape in range while the others compile: it must not be a static one for max)
    assert range_plan.bounds_for(1, 64, 64) == [1, 2, 4, 8, 16, 32, 64]
    assert range_plan.bounds_for(1, 1, 8) == [1, 2, 4, 8]


def test_fewer_bounds_drop_every_other_power_of_two_but_keep_opt_and_max():
    kept = range_plan.bounds_for(1, 20, 1024, count=6)
    assert len(kept) <= 6 and {19, 20, 1024} <= set(kept)
    assert range_plan.bounds_for(1, 20, 1024, count=2) == [20, 1024]


def test_a_range_from_zero_gives_size_zero_a_bucket_of_its_own():
    assert range_plan.bounds_for(0, 4, 16)[0] == 0


def test_buckets_per_executable_stay_within_the_limit():
    for variables in (
        {"a": (1, 8, 64)},
        {"a": (1, 8, 64), "b": (1, 16, 512)},
        {"a": (1, 2, 8), "b": (1, 2, 8), "c": (1, 2, 8)},
    ):
        bounds = range_plan.plan_buckets(variables)
        assert math.prod(len(b) for b in bounds.values()) <= range_plan.MAX_PROGRAMS
        assert all(bounds[n][-1] == hi for n, (_, _, hi) in variables.items())


@pytest.mark.parametrize(
    "variables, expected",
    [
        ({"a": (1, 2, 5)}, {"a": [1, 2, 3, 4, 5]}),
        ({"a": (1, 50, 1000)}, {"a": list(range(18, 82))}),  # the 64 sizes nearest opt
    ],
)
def test_sizes_of_a_static_program_per_shape(variables, expected):
    assert range_plan.plan_sizes(variables) == expected


def test_lookup_gives_each_size_its_bucket():
    assert range_plan.lookup([1, 2, 4, 8], 8) == [1, 1, 2, 4, 4, 8, 8, 8, 8]
    assert range_plan.lookup([2, 3], 4, exact=True) == [-1, -1, 2, 3, -1]


def test_a_plan_whose_rows_are_independent_has_no_bound_below_opt():
    # (opt's program runs opt alone as fast, and smaller sizes while their buckets compile)
    assert range_plan.for_rows([1, 2, 4, 7, 8, 16, 32, 64], 1, 8) == [1, 2, 4, 8, 16, 32, 64]
    assert range_plan.for_rows([1, 2, 4, 8, 16], 1, 5) == [1, 2, 4, 8, 16]  # (4: a power of two)
    assert range_plan.for_rows([3, 4, 8], 3, 4) == [3, 4, 8]  # (3: the smallest size)


def test_finer_bounds_add_three_times_the_powers_of_two_within_the_limit():
    assert range_plan.finer([1, 2, 4, 7, 8, 16, 32], 1, 32) == [1, 2, 3, 4, 6, 7, 8, 12, 16, 24, 32]
    assert range_plan.finer([1, 2, 4, 8, 16, 32], 1, 32, count=8) == [1, 2, 4, 8, 12, 16, 24, 32]  # (largest first)
    assert range_plan.finer([1, 2, 4, 8, 16, 25], 1, 25) == [1, 2, 3, 4, 6, 8, 12, 16, 25]  # (not 24: hi - 1)
    assert range_plan.finer([16, 32, 64], 16, 64) == [16, 24, 32, 48, 64]
