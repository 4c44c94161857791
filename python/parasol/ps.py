"""Parameter-server tables from Python: dense rows of float32 or float64 spread over every rank,
read as tensors, updated by adding, under a consistency model (BSP, SSP with a staleness bound,
ESSP, VAP, ASP). One worker per process: the Python thread.

    import parasol, parasol.ps
    parasol.init()
    server = parasol.ps.ParameterServer()
    w = server.table(1, width=10, rows=1000, consistency="ssp:2")   # collective, before any read
    for clock in range(100):
        rows = w.get([3, 7])            # may be up to 2 clocks stale, never more
        w.inc([3, 7], -0.1 * gradient)  # added at the servers; visible to all within the bound
        server.clock()
    server.close()                      # collective

A read at clock c sees every update from clocks <= c - s - 1 of every rank, and this rank's own.
Numpy arrays go in and out through torch.from_numpy / tensor.numpy() (no copies).
"""
import torch

import parasol
from parasol import _parasol


class Table:
    """A handle on one table of a ParameterServer."""

    def __init__(self, server, table_id, width, rows, consistency, dtype):
        self._server, self.id = server, table_id
        self.width, self.rows, self.consistency, self.dtype = width, rows, consistency, dtype

    def get(self, rows):
        """A tensor of len(rows) x width (one row: width) as the consistency model allows."""
        if isinstance(rows, int):
            return self._server._ps.get(self.id, [rows])[0]
        return self._server._ps.get(self.id, [int(r) for r in rows])

    def inc(self, rows, deltas):
        """Adds deltas (len(rows) x width; for one row, width) to the rows."""
        if isinstance(rows, int):
            rows = [rows]
        if not torch.is_tensor(deltas):
            deltas = torch.as_tensor(deltas)
        self._server._ps.inc(self.id, [int(r) for r in rows], deltas)


class ParameterServer:
    """Collective: every rank makes one, creates the same tables in the same order, and closes it."""

    def __init__(self, timeout_ms=None):
        self._ps = _parasol.ParameterServer(parasol.world(), timeout_ms=timeout_ms or 0)
        parasol._register_closer(self)

    def table(self, table_id, width, rows, consistency="ssp:0", dtype="float32", reads="two-sided"):
        """consistency: "bsp", "ssp:S", "essp:S", "vap:S:THRESHOLD" or "asp". reads: "two-sided"
        (ask the rows' servers) or "one-sided" (get them from the servers' registered memory; bsp or
        ssp; the rows range-partitioned)."""
        self._ps.create_table(table_id, width, rows, consistency=consistency, dtype=dtype, reads=reads)
        return Table(self, table_id, width, rows, consistency, dtype)

    def clock(self):
        """Ends this rank's clock: its updates leave; later reads may need fresher rows."""
        self._ps.clock()

    @property
    def clock_count(self):
        return self._ps.clock_count

    @property
    def wait_seconds(self):
        """Time this rank's reads spent waiting for rows fresh enough."""
        return self._ps.wait_seconds

    def barrier(self):
        """Returns once every rank called it; every update before it is visible after it."""
        self._ps.global_barrier()

    def close(self):
        if self._ps is not None:
            self._ps.close()
            self._ps = None
