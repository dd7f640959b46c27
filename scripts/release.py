"""Release one tripy distribution: bump, check the dependents' ranges, changelog, commit, tag, build, publish.

    uv run python scripts/release.py tripy-flatir patch --index-url http://127.0.0.1:8080/

1. Bumps ``version`` in the package's pyproject.toml (``major``, ``minor`` or ``patch``; ``as-is`` releases
   the version already there, for a package's first tagged release).
2. Checks that every other package's declared range for it admits the new version. Where one does not
   (a minor release while at 0.x, or a major one), it rewrites that range to the policy's
   (``>=0.Y,<0.Y+1`` at 0.x, ``>=X.Y,<X+1`` from 1.0) and says so: those dependents need a release too.
3. Adds the CHANGELOG.md entry: its ``## Unreleased`` section (written as the work was done) becomes the
   release's; without one, ``--notes``, else the subjects of the commits that touched the package since its
   last tag. Then it re-locks (``uv lock``), commits and tags ``<package>-v<version>``.
4. Builds the wheel and sdist (``uv build --package``) into ``dist/<package>-<version>/``, and publishes
   them with ``uv publish`` when ``--index-url`` is given (credentials: UV_PUBLISH_USERNAME /
   UV_PUBLISH_PASSWORD or UV_PUBLISH_TOKEN, as uv reads them).

It refuses to run on a work tree with uncommitted changes, and if the tag exists already. The policy and
the whole flow: docs/guides/releasing.rst.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Dict, List, Optional

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
BUMPS = ("major", "minor", "patch", "as-is")


class ReleaseError(Exception):
    pass


def git(*args: str, cwd: Path = ROOT) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ReleaseError(f"git {' '.join(args)} failed:\n{result.stderr}")
    return result.stdout.strip()


def packages(root: Path = ROOT) -> Dict[str, Path]:
    """Distribution name -> its pyproject.toml, for the workspace's members."""
    found = {}
    for pyproject in sorted(root.glob("packages/*/pyproject.toml")):
        found[tomllib.loads(pyproject.read_text())["project"]["name"]] = pyproject
    return found


def bumped(version: Version, bump: str) -> Version:
    major, minor, patch = (list(version.release) + [0, 0])[:3]
    if bump == "major":
        return Version(f"{major + 1}.0.0")
    if bump == "minor":
        return Version(f"{major}.{minor + 1}.0")
    if bump == "patch":
        return Version(f"{major}.{minor}.{patch + 1}")
    return version


def policy_range(version: Version) -> str:
    """The range a dependent declares for `version`: what the compatibility policy says stays compatible."""
    major, minor = (list(version.release) + [0])[:2]
    if major == 0:
        return f">=0.{minor},<0.{minor + 1}"
    return f">={major}.{minor},<{major + 1}"


def set_version(pyproject: Path, version: Version) -> None:
    text = pyproject.read_text()
    new, count = re.subn(r'(?m)^version = "[^"]*"$', f'version = "{version}"', text, count=1)
    if count != 1:
        raise ReleaseError(f'{pyproject}: no `version = "..."` line')
    pyproject.write_text(new)


def check_dependents(name: str, version: Version, root: Path = ROOT) -> List[str]:
    """Checks every package's range for `name` against `version`; rewrites those that exclude it.
    Returns one line per dependent, saying which admitted it and which were updated."""
    report = []
    for dependent, pyproject in packages(root).items():
        for spec in tomllib.loads(pyproject.read_text())["project"].get("dependencies", []):
            requirement = Requirement(spec)
            if requirement.name != name:
                continue
            if requirement.specifier.contains(version, prereleases=True):
                report.append(f"{dependent}: its range {spec!r} admits {name} {version}")
                continue
            new_spec = f"{name}{policy_range(version)}"
            pyproject.write_text(pyproject.read_text().replace(f'"{spec}"', f'"{new_spec}"', 1))
            report.append(
                f"{dependent}: its range {spec!r} does NOT admit {name} {version}: updated to "
                f"{new_spec!r}; release {dependent} too, or its users cannot get {name} {version}"
            )
    return report


def last_tag(name: str, root: Path = ROOT) -> Optional[str]:
    tags = git("tag", "--list", f"{name}-v*", cwd=root).split()
    versions = sorted((Version(t[len(name) + 2 :]), t) for t in tags)
    return versions[-1][1] if versions else None


def changelog_notes(name: str, pyproject: Path, root: Path = ROOT) -> List[str]:
    """The subjects of the commits that touched the package since its last tag (all, on a first release)."""
    since = last_tag(name, root)
    span = [f"{since}..HEAD"] if since else ["HEAD"]
    log = git("log", "--format=%s", *span, "--", str(pyproject.parent.relative_to(root)), cwd=root)
    notes = [line for line in log.splitlines() if line and not line.startswith("Release ")]
    return notes or ["No changes to this package's own files."]


def add_changelog_entry(changelog: Path, version: Version, notes: List[str]) -> bool:
    """Adds ``## <version>`` above the newest entry (the ``## Unreleased`` section, if there is one, becomes it,
    `notes` unused); False if the changelog has that entry already."""
    text = changelog.read_text()
    if re.search(rf"(?m)^## {re.escape(str(version))}$", text):
        return False
    unreleased = re.search(r"(?m)^## Unreleased$", text)
    if unreleased:
        changelog.write_text(text[: unreleased.start()] + f"## {version}" + text[unreleased.end() :])
        return True
    entry = f"## {version}\n\n" + "".join(f"- {note}\n" for note in notes) + "\n"
    first = re.search(r"(?m)^## ", text)
    at = first.start() if first else len(text)
    changelog.write_text(text[:at] + entry + text[at:])
    return True


def run(command: List[str], cwd: Path = ROOT) -> None:
    print("$", " ".join(command), flush=True)
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise ReleaseError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")


def prepare(name: str, bump: str, notes: Optional[str], root: Path = ROOT) -> Version:
    """Steps 1-3: version, dependents' ranges, changelog, lock, commit and tag. Returns the new version."""
    found = packages(root)
    if name not in found:
        raise ReleaseError(f"no package {name!r}; the packages are: {', '.join(found)}")
    if git("status", "--porcelain", cwd=root):
        raise ReleaseError("the work tree has uncommitted changes: commit or stash them first")
    pyproject = found[name]
    version = bumped(Version(tomllib.loads(pyproject.read_text())["project"]["version"]), bump)
    tag = f"{name}-v{version}"
    if git("tag", "--list", tag, cwd=root):
        raise ReleaseError(f"tag {tag} exists already: {name} {version} was released")
    entries = [notes] if notes else changelog_notes(name, pyproject, root)
    set_version(pyproject, version)
    for line in check_dependents(name, version, root):
        print(line)
    add_changelog_entry(pyproject.parent / "CHANGELOG.md", version, entries)
    run(["uv", "lock", "--quiet"], cwd=root)
    git("add", "-A", "packages", "uv.lock", cwd=root)
    if git("status", "--porcelain", cwd=root):
        git("commit", "-q", "-m", f"Release {name} {version}", cwd=root)
    git("tag", "-a", tag, "-m", f"{name} {version}", cwd=root)
    print(f"tagged {tag}")
    return version


def build_and_publish(name: str, version: Version, index_url: Optional[str], root: Path = ROOT) -> List[Path]:
    """Step 4: the wheel and the sdist, from the tagged tree; published when `index_url` is given."""
    out = root / "dist" / f"{name}-{version}"
    run(["uv", "build", "--package", name, "--wheel", "--sdist", "-o", str(out)], cwd=root)
    files = sorted([*out.glob("*.whl"), *out.glob("*.tar.gz")])
    if index_url:
        run(["uv", "publish", "--publish-url", index_url, *map(str, files)], cwd=root)
        print(f"published {', '.join(f.name for f in files)} to {index_url}")
    return files


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("package", help="distribution name, e.g. tripy-flatir")
    parser.add_argument("bump", choices=BUMPS)
    parser.add_argument("--index-url", help="upload URL of the package index (omit to build without publishing)")
    parser.add_argument(
        "--notes", help="the changelog entry (default: the package's commit subjects since its last tag)"
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this checkout)")
    args = parser.parse_args(argv)
    try:
        version = prepare(args.package, args.bump, args.notes, args.root)
        build_and_publish(args.package, version, args.index_url, args.root)
    except ReleaseError as e:
        print(f"release failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
