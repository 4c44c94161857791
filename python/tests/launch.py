"""Runs a worker script of this folder on N ranks under scripts/mpirun.sh (PARASOL_MPIRUN) and
returns its exit code, its JSON lines and all its output."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run(np, script, *args, timeout=300, env=None):
    mpirun = os.environ.get("PARASOL_MPIRUN", os.path.join(HERE, "..", "..", "scripts", "mpirun.sh"))
    cmd = [mpirun, "-np", str(np), sys.executable, os.path.join(HERE, script), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc.returncode, lines, proc.stdout + proc.stderr


def write_result(rank, line):
    """A worker's side of run_collecting: RESULT_DIR/resultRANK.json, whole or not at all (mpirun
    kills the other ranks when one fails, maybe while one of them writes)."""
    path = os.path.join(os.environ["RESULT_DIR"], f"result{rank}.json")
    with open(path + ".tmp", "w") as f:
        json.dump(line, f)
    os.replace(path + ".tmp", path)


def run_collecting(np, script, *args, timeout=120, env=None):
    """run() for a job expected to fail: each rank writes RESULT_DIR/resultRANK.json (mpirun may
    merge the lines of ranks that exit at once). Returns the exit code, those results in rank
    order, the output and the seconds the job took."""
    with tempfile.TemporaryDirectory() as results:
        start = time.monotonic()
        code, _, output = run(np, script, *args, timeout=timeout, env={**(env or {}), "RESULT_DIR": results})
        seconds = time.monotonic() - start
        lines = []
        for path in sorted(glob.glob(os.path.join(results, "result*.json"))):
            with open(path) as f:
                lines.append(json.load(f))
    return code, lines, output, seconds
