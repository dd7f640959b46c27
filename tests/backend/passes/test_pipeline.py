"""The pipeline: the passes in order, each logged under its name on the ``passes`` topic and dumped where asked."""

import os

from tripy_flatir.logging import logger
from tripy_backend import pipeline
from tripy_backend.passes import Job, Pass

NEGATE = b"""func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = stablehlo.negate %x : tensor<?xf32>
  return %0 : tensor<?xf32>
}"""


def test_the_passes_in_order():
    assert [p.name for p in pipeline.PIPELINE] == [
        "independent-rows",
        "bounded-markers",
        "static-shapes",
        "lower-markers",
        "cse",
        "channels-last",
        "matrix-vector-isolation",
        "group-norms",
        "sums-as-products",
        "onednn-pooling",
        "onednn-convolutions",
    ]
    assert len({p.name for p in pipeline.PIPELINE}) == len(pipeline.PIPELINE)


def test_passes_that_do_not_apply_are_skipped():
    seen = []
    passes = [
        Pass("first", lambda m, job: seen.append("first") or m),
        Pass("never", lambda m, job: seen.append("never") or m, applies=lambda job: False),
        Pass("last", lambda m, job: seen.append("last") or m),
    ]
    assert pipeline.run(passes, NEGATE, Job()) == NEGATE
    assert seen == ["first", "last"]


def test_each_pass_is_logged_and_dumped_under_its_name(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(pipeline.DUMP_ENV_VAR, str(tmp_path))
    with logger.use_verbosity("passes"):
        pipeline.bound(NEGATE, [(8,)], [(0, 0)], name="negate")
    printed = capsys.readouterr()
    log = printed.out + printed.err
    for name in ("bounded-markers", "static-shapes", "lower-markers", "cse"):
        assert f"[passes] negate: {name} in " in log
    (folder,) = os.listdir(tmp_path)
    assert folder.endswith("-negate")
    dumped = sorted(os.listdir(tmp_path / folder))
    assert dumped == [
        "00-input.mlir",
        "02-bounded-markers.mlir",
        "03-static-shapes.mlir",
        "04-lower-markers.mlir",
        "05-cse.mlir",
    ]  # (independent-rows applies only where the size variables are known: ``ranges`` passes them)
    assert "stablehlo.set_dimension_size" in (tmp_path / folder / "04-lower-markers.mlir").read_text()


def test_no_dumps_unless_asked(tmp_path, monkeypatch):
    monkeypatch.delenv(pipeline.DUMP_ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    pipeline.specialize(NEGATE, [(3,)])
    assert os.listdir(tmp_path) == []
