"""Sepia installs as a package into an environment it does not own: its requirements are
ranges (an existing Spark 4 environment keeps its versions), the environment the tests run
in satisfies them, and a wheel built from the sources installs into a clean virtual
environment and runs."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
REQUIREMENTS = [Requirement(text) for text in PROJECT["dependencies"]]
EXTRAS = [Requirement(text) for group in PROJECT["optional-dependencies"].values()
          for text in group]  # fmt: skip


def test_requirements_are_ranges_not_pins():
    pinned = [str(r) for r in REQUIREMENTS + EXTRAS
              if any(spec.operator in ("==", "===") for spec in r.specifier)]  # fmt: skip
    assert not pinned
    spark = next(r for r in REQUIREMENTS if r.name == "pyspark")
    assert spark.specifier.contains("4.0.0") and not spark.specifier.contains("5.0.0")


def test_the_test_environment_satisfies_the_ranges():
    for requirement in REQUIREMENTS + EXTRAS:
        installed = metadata.version(requirement.name)
        assert requirement.specifier.contains(installed, prereleases=True), (
            f"{requirement.name} {installed} is outside {requirement.specifier}"
        )


@pytest.mark.slow
def test_a_built_wheel_installs_into_a_clean_venv_and_runs(tmp_path: Path):
    """Slow (minutes: pip resolves and unpacks pyspark): `pip wheel`, a new venv without
    the system's packages, `pip install` of the wheel, then `sepia run` of an example."""
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels),
                    str(ROOT)], check=True, capture_output=True)  # fmt: skip
    (wheel,) = wheels.glob("sepia-*.whl")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([venv / "bin" / "python", "-m", "pip", "install", "--quiet", str(wheel)],
                   check=True, capture_output=True)  # fmt: skip
    example = ROOT / "examples" / "e1-shops-coupons"
    command = [venv / "bin" / "sepia", "run", str(example), "--engine", "local", "--format",
               "jsonl"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert len(done.stdout.splitlines()) == 3  # the example's expected.jsonl
