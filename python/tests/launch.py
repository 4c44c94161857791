"""Runs a worker script of this folder on N ranks under scripts/mpirun.sh (PARASOL_MPIRUN) and
returns its exit code, its JSON lines and all its output."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(np, script, *args, timeout=300, env=None):
    mpirun = os.environ.get("PARASOL_MPIRUN", os.path.join(HERE, "..", "..", "scripts", "mpirun.sh"))
    cmd = [mpirun, "-np", str(np), sys.executable, os.path.join(HERE, script), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, lines, proc.stdout + proc.stderr
