"""What users install: the wheel carries every file the docs and the report refer to, the package knows its version,
and each import package is marked typed."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Folder in the checkout -> where it lands in the cardzoo namespace.
PACKAGES = {"envs": "cardzoo/envs", "agents": "cardzoo/agents", "training": "cardzoo/training",
            "evaluation": "cardzoo/evaluation", "seeds": "cardzoo/seeds", "play": "cardzoo/play"}
DATA = ("agents/policies", "agents/beliefs", "seeds", "evaluation/results", "play/static")


def _tracked(folder: str) -> list[str]:
    out = subprocess.run(["git", "ls-files", folder], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines() if not line.endswith(".py")]


def test_the_wheel_carries_policies_rules_report_results_and_curves(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True)
    (wheel,) = tmp_path.glob("cardzoo-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = []
    for folder in DATA:
        for path in _tracked(folder):
            top, rest = path.split("/", 1)
            expected.append(f"{PACKAGES[top]}/{rest}")
    assert len(expected) > 40 and any("results/training/" in e and e.endswith("curve.png") for e in expected)
    assert sorted(set(expected) - names) == []
    assert {f"{p}/py.typed" for p in PACKAGES.values()} <= names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_the_version_is_the_projects():
    project = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    from cardzoo.envs import __version__

    assert version("cardzoo") == __version__ == project
    shown = subprocess.run([sys.executable, "-m", "cardzoo.evaluation.cli", "--version"], capture_output=True,
                           text=True, check=True).stdout
    assert shown.strip() == f"cardzoo {project}"


def test_the_citation_gives_the_packages_version():
    """The version is stated in pyproject.toml; CITATION.cff must repeat it (the format requires one), so it is
    checked rather than trusted."""
    project = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    cited = re.search(r'^version: "([^"]+)"', (ROOT / "CITATION.cff").read_text(), re.M).group(1)
    assert cited == project
