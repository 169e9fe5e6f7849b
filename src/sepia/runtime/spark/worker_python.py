"""The interpreter Spark starts its Python processes with, on a local master.

Spark puts its own copy of PySpark, `pyspark/python/lib/pyspark.zip`, first on every Python
worker's path. Python cannot cache compiled modules from a zip, so each process Spark starts
compiles PySpark's modules again: 1.4 s of CPU instead of 0.3 s for the driver-side process
of transformWithState, which Spark (4.3) waits for only 10 s, a fixed limit. On a loaded
machine (load 20 on 2 cores) that process took 14-20 s and every stateful query failed at
its start ("Python worker failed to connect back"). The pip-installed PySpark this
interpreter runs is the very package the zip sits in, so the launcher written here drops
that zip (and py4j's) from the path and runs the module Spark asked for from the installed,
compiled package. The launcher lives in the temporary folder, which Python would put first
on the path as the script's own: any module file there (a `grp.py` left in /tmp) would
shadow the standard library's in every worker, so the launcher takes its folder off.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

LAUNCHER = '''#!{python}
"""Sepia's launcher for Spark's Python processes (sepia.runtime.spark.worker_python)."""
import os, runpy, sys
ZIPS = {zips!r}
HERE = os.path.dirname(os.path.realpath(__file__))
sys.path[:] = [p for p in sys.path[:1] if p != HERE] + [p for p in sys.path[1:] if p not in ZIPS]
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in ZIPS
)
if sys.argv[1:2] == ["-m"]:
    module, sys.argv = sys.argv[2], sys.argv[2:]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
else:
    os.execv({python!r}, [{python!r}, *sys.argv[1:]])
'''


def worker_python() -> str:
    """The launcher's path (written once per interpreter, in the temporary folder)."""
    import py4j
    import pyspark

    lib = Path(pyspark.__file__).parent / "python" / "lib"
    installed = lib not in Path(py4j.__file__).parents  # py4j too, not only in its zip
    zips = {str(p) for p in lib.glob("*.zip") if installed or p.name.startswith("pyspark")}
    text = LAUNCHER.format(python=sys.executable, zips=zips)
    digest = hashlib.sha1(text.encode()).hexdigest()[:12]
    path = Path(tempfile.gettempdir()) / f"sepia-spark-python-{digest}"
    if not path.exists():
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        partial.write_text(text)
        partial.chmod(0o755)
        partial.rename(path)
    return str(path)
