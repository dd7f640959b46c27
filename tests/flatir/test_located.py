"""stack_info.located: a frame given for everything made in a context (an importer's ops at the model's line)."""

import threading

from tripy_flatir import stack_info


def _here():
    return stack_info.capture().user_frame


def test_located_gives_its_frame_on_its_thread_and_restores_the_previous_one():
    outer = stack_info.SourceFrame("model.py", 3, "forward", "y = x @ w", None)
    inner = stack_info.SourceFrame("<onnx g>", 2, "", "node 'mm' (MatMul)", None)
    seen = []
    with stack_info.located(stack_info.StackInfo.at(outer)):
        assert _here() is outer and bool(stack_info.capture())
        with stack_info.located(stack_info.StackInfo.at(inner)):
            assert _here() is inner
            thread = threading.Thread(target=lambda: seen.append(_here()))
            thread.start()
            thread.join()
        assert _here() is outer
        with stack_info.located(None):  # (None: as it was)
            assert _here() is outer
    assert _here().file == __file__ and _here().function == "_here"
    assert seen[0].file != "<onnx g>"  # (another thread captures its own frames)
    assert not stack_info._GIVEN


def test_located_is_left_on_an_exception():
    frame = stack_info.SourceFrame("model.py", 3, "forward", "", None)
    try:
        with stack_info.located(stack_info.StackInfo.at(frame)):
            raise ValueError
    except ValueError:
        pass
    assert _here().file == __file__
