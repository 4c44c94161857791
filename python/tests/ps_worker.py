"""Run under mpirun by test_ps.py: every rank adds 1 to its own column of row 0 once per clock;
rank 1 is slow (sleeps before each clock), so without a bound rank 0 would run far ahead and read
rank 1's count from long ago. Prints, on rank 0, one JSON line: for each of its clocks c, the
counts it read (its own and rank 1's) and the bound."""
import json
import sys
import time

import torch

import parasol
import parasol.ps


def main():
    consistency, clocks = sys.argv[1], int(sys.argv[2])
    reads = sys.argv[3] if len(sys.argv) > 3 else "two-sided"
    parasol.init(timeout_ms=30000)
    server = parasol.ps.ParameterServer()
    table = server.table(1, width=parasol.size(), rows=4, consistency=consistency, reads=reads)
    other = server.table(2, width=3, rows=2, consistency="bsp", dtype="float64")
    reads = []
    for c in range(clocks):
        row = table.get(0)
        reads.append([c] + [float(v) for v in row])
        delta = torch.zeros(parasol.size())
        delta[parasol.rank()] = 1.0
        table.inc(0, delta)
        if parasol.rank() == 1:
            time.sleep(0.03)
        server.clock()
    other.inc([1], torch.tensor([[1.0, 2.0, 3.0]], dtype=torch.float64))
    server.barrier()
    total = other.get([1]).tolist()
    if parasol.rank() == 0:
        print(json.dumps({"reads": reads, "total": total, "wait_seconds": server.wait_seconds}), flush=True)
    server.close()
    parasol.shutdown()


if __name__ == "__main__":
    main()
