"""Run under mpirun by test_torch.py with two ranks; each rank that finishes writes
RESULT_DIR/resultRANK.json: {"rank": r, "type": "TimeoutError" or null, "message": ...}.
  silent    rank 1 stops (SIGSTOP) in the middle of step 3's backward, as a hung or cut-off host
            does; rank 0 must raise within its deadline, and, the error left uncaught, the whole
            job must end (parasol aborts it at exit: MPI could not be finalised with rank 1 gone).
  mismatch  rank 1 wraps a model with another layer size: both must raise, not hang.
The result's "builtin" says whether the error is also the built-in exception of its kind.
"""
import os
import signal
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import launch
import parasol
import parasol.torch as pt


def report(e):
    builtin = {"TimeoutError": TimeoutError, "InvalidArgumentError": ValueError}.get(type(e).__name__)
    result({"rank": parasol.rank(), "type": type(e).__name__, "message": str(e),
            "builtin": builtin is not None and isinstance(e, builtin)})


def result(line):
    """In a file per rank: mpirun may merge the lines of ranks that exit at once."""
    launch.write_result(parasol.rank(), line)


def silent():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(20, 50), nn.ReLU(), nn.Linear(50, 5))
    opt = pt.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, sync="wfbp")
    x, y = torch.randn(8, 20), torch.randint(0, 5, (8,))
    for step in range(6):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if step == 3 and parasol.rank() == 1:
            os.kill(os.getpid(), signal.SIGSTOP)
        try:
            loss.backward()
            opt.step()
        except parasol.Error as e:
            report(e)
            raise
    result({"rank": parasol.rank(), "type": None})


def mismatch():
    width = 50 if parasol.rank() == 0 else 51
    model = nn.Sequential(nn.Linear(20, width), nn.ReLU(), nn.Linear(width, 5))
    try:
        pt.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, sync="wfbp")
        result({"rank": parasol.rank(), "type": None})
    except parasol.Error as e:
        report(e)
        raise


def main():
    parasol.init(timeout_ms=int(os.environ.get("TIMEOUT_MS", "3000")))
    pt.barrier()
    {"silent": silent, "mismatch": mismatch}[sys.argv[1]]()


if __name__ == "__main__":
    main()
