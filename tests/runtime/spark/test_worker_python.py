"""The launcher of Spark's Python processes (`worker_python`) runs the module asked for
from the installed packages, never from the temporary folder it is written to."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from sepia.runtime.spark.worker_python import worker_python


def test_a_module_file_beside_the_launcher_shadows_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    launcher = worker_python()
    assert Path(launcher).parent == tmp_path
    (tmp_path / "grp.py").write_text("raise SystemExit('the stray grp.py ran')\n")
    run = subprocess.run([launcher, "-m", "tarfile", "--help"], capture_output=True,
                         text=True, cwd=tmp_path.parent, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "stray" not in run.stderr
