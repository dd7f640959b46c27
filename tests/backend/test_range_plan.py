"""The range plan (tripy_backend.range_plan): which buckets cover declared ranges. Pure arithmetic, no compiler."""

import math

import pytest

from tripy_backend import range_plan


def test_bounds_are_the_powers_of_two_opt_and_max():
    assert range_plan.bounds_for(1, 8, 64) == [1, 2, 4, 8, 16, 32, 64]
    assert range_plan.bounds_for(1, 20, 100) == [1, 2, 4, 8, 16, 20, 32, 64, 100]


def test_fewer_bounds_drop_every_other_power_of_two_but_keep_opt_and_max():
    kept = range_plan.bounds_for(1, 20, 1024, count=6)
    assert len(kept) <= 6 and {20, 1024} <= set(kept)


def test_a_range_from_zero_gives_size_zero_a_bucket_of_its_own():
    assert range_plan.bounds_for(0, 4, 16)[0] == 0


def test_exact_sizes_near_opt():
    kept = range_plan.bounds_for(1, 20, 64, exact=6)
    assert set(range(17, 23)) <= set(kept) and 64 in kept


def test_buckets_per_executable_stay_within_the_limit():
    for variables in (
        {"a": (1, 8, 64)},
        {"a": (1, 8, 64), "b": (1, 16, 512)},
        {"a": (1, 2, 8), "b": (1, 2, 8), "c": (1, 2, 8)},
    ):
        bounds = range_plan.plan_buckets(variables)
        assert math.prod(len(b) for b in bounds.values()) <= range_plan.MAX_PROGRAMS
        assert all(bounds[n][-1] == hi for n, (_, _, hi) in variables.items())


def test_a_cheap_program_of_one_variable_gets_exact_sizes():
    bounds = range_plan.plan_buckets({"a": (1, 20, 100)}, cheap=True)["a"]
    assert len(bounds) > range_plan.EXACT_SIZES


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
