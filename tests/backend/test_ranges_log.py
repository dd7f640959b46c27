"""The compile log's reason for a range without bounded programs names the compiler's message, not only the
line that introduces it."""

from tripy_backend import ranges


def test_a_reason_that_only_introduces_the_message_keeps_its_next_line():
    e = RuntimeError(
        "XLA:CPU failed to compile the program:\n    UNIMPLEMENTED: Dynamic dimension propagation on "
        "DynamicSlice\n    more detail"
    )
    assert ranges._first_line(e) == (
        "XLA:CPU failed to compile the program: UNIMPLEMENTED: Dynamic dimension propagation on DynamicSlice"
    )


def test_a_one_line_reason_and_an_empty_one():
    assert ranges._first_line(ValueError("a slice with a step\nsecond")) == "a slice with a step"
    assert ranges._first_line(ValueError("")) == "ValueError"
