"""scripts/release.py's rules, fast: version bumps, the policy's ranges, the dependents' check, the
changelog entry, and the refusals (unknown package, uncommitted changes, a version already tagged). The
whole flow against a real index: test_release.py."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("tripy_release_script", ROOT / "scripts" / "release.py")
assert _spec is not None and _spec.loader is not None
release = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = release
_spec.loader.exec_module(release)


@pytest.mark.parametrize(
    "version, bump, expected",
    [
        ("0.1.0", "patch", "0.1.1"),
        ("0.1.3", "minor", "0.2.0"),
        ("0.4.2", "major", "1.0.0"),
        ("1.2.3", "minor", "1.3.0"),
        ("2.0.1", "as-is", "2.0.1"),
    ],
)
def test_bumps(version, bump, expected):
    assert release.bumped(Version(version), bump) == Version(expected)


def test_policy_ranges():
    assert release.policy_range(Version("0.2.0")) == ">=0.2,<0.3"
    assert release.policy_range(Version("1.4.2")) == ">=1.4,<2"


def _workspace(root: Path) -> Path:
    for name, deps in [("low", []), ("mid", ["low>=0.1,<0.2", "numpy>=1.24"]), ("top", ["mid>=0.1,<0.2"])]:
        (root / "packages" / name).mkdir(parents=True)
        (root / "packages" / name / "pyproject.toml").write_text(
            f'[project]\nname = "{name}"\nversion = "0.1.0"\ndependencies = {deps!r}\n'.replace("'", '"')
        )
        (root / "packages" / name / "CHANGELOG.md").write_text(f"# Changelog: {name}\n\n## 0.1.0\n\n- First.\n")
    for args in (
        ["init", "-q"],
        ["config", "user.name", "t"],
        ["config", "user.email", "t@localhost"],
        ["add", "-A"],
        ["commit", "-q", "-m", "start"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True)
    return root


def test_dependents_ranges_are_checked_and_updated(tmp_path):
    root = _workspace(tmp_path)
    assert release.check_dependents("low", Version("0.1.5"), root) == [
        "mid: its range 'low>=0.1,<0.2' admits low 0.1.5"
    ]
    report = release.check_dependents("low", Version("0.2.0"), root)
    assert report == [
        "mid: its range 'low>=0.1,<0.2' does NOT admit low 0.2.0: updated to 'low>=0.2,<0.3'; "
        "release mid too, or its users cannot get low 0.2.0"
    ]
    assert '"low>=0.2,<0.3", "numpy>=1.24"' in (root / "packages" / "mid" / "pyproject.toml").read_text()


def test_changelog_entry_goes_on_top_once(tmp_path):
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog: low\n\nintro\n\n## 0.1.0\n\n- First.\n")
    assert release.add_changelog_entry(changelog, Version("0.1.1"), ["Fix a thing", "Fix another"])
    assert changelog.read_text() == (
        "# Changelog: low\n\nintro\n\n## 0.1.1\n\n- Fix a thing\n- Fix another\n\n## 0.1.0\n\n- First.\n"
    )
    assert not release.add_changelog_entry(changelog, Version("0.1.1"), ["again"])


def test_the_unreleased_section_becomes_the_release(tmp_path):
    changelog = tmp_path / "CHANGELOG.md"
    changelog.write_text("# Changelog: low\n\n## Unreleased\n\n- Faster.\n\n## 0.1.0\n\n- First.\n")
    assert release.add_changelog_entry(changelog, Version("0.1.1"), ["a commit subject"])
    assert changelog.read_text() == "# Changelog: low\n\n## 0.1.1\n\n- Faster.\n\n## 0.1.0\n\n- First.\n"


def test_refusals(tmp_path):
    root = _workspace(tmp_path)
    with pytest.raises(release.ReleaseError, match="no package 'tripy'; the packages are: low, mid, top"):
        release.prepare("tripy", "patch", None, root)
    subprocess.run(["git", "tag", "-a", "low-v0.1.1", "-m", "x"], cwd=root, check=True)
    with pytest.raises(release.ReleaseError, match="tag low-v0.1.1 exists already"):
        release.prepare("low", "patch", None, root)
    (root / "packages" / "low" / "new.py").write_text("")
    with pytest.raises(release.ReleaseError, match="uncommitted changes"):
        release.prepare("low", "minor", None, root)
    assert release.last_tag("low", root) == "low-v0.1.1" and release.last_tag("mid", root) is None


def test_main_reports_failure(tmp_path, capsys):
    root = _workspace(tmp_path)
    assert release.main(["nothing", "patch", "--root", str(root)]) == 1
    assert "release failed: no package 'nothing'" in capsys.readouterr().err


_skew_spec = importlib.util.spec_from_file_location("tripy_version_skew", ROOT / "scripts" / "version_skew.py")
assert _skew_spec is not None and _skew_spec.loader is not None
skew = importlib.util.module_from_spec(_skew_spec)
sys.modules[_skew_spec.name] = skew
_skew_spec.loader.exec_module(skew)


def test_skew_picks_the_newest_release_the_ranges_admit(tmp_path):
    root = _workspace(tmp_path)
    for tag in ("low-v0.1.0", "low-v0.1.3", "low-v0.2.0"):
        subprocess.run(["git", "tag", "-a", tag, "-m", tag], cwd=root, check=True)
    names = skew.projects(root)
    assert skew.below("top", names) == ["low", "mid"]
    chosen, notes = skew.choose("top", names, root)
    assert chosen == {"low": Version("0.1.3"), "mid": None}
    assert notes == [
        "low: 0.1.3 (tag low-v0.1.3), admitted by mid: low<0.2,>=0.1",
        "mid: no release tagged yet; taken from HEAD",
    ]


def test_skew_without_tags_says_so(tmp_path, capsys):
    root = _workspace(tmp_path)
    assert skew.main(["--root", str(root)]) == 0
    assert "no release is tagged in this clone" in capsys.readouterr().out
