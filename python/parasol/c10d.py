"""The torch.distributed backend "parasol", registered by `import parasol.torch`:

    import torch.distributed as dist
    import parasol.torch  # noqa: F401
    dist.init_process_group("parasol")          # under mpirun: rank and size from MPI
    model = torch.nn.parallel.DistributedDataParallel(model)

Under mpirun, importing parasol.torch also gives torch's env:// rendezvous what it reads when the
launcher is not torchrun: RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE from OpenMPI's
variables, and MASTER_ADDR and MASTER_PORT (rank 0's host name and a free port, sent over MPI),
unless they are already set. So an unchanged DDP script runs under mpirun with "parasol" (or
with "gloo", for comparison).

The collectives' deadline is init_process_group's timeout; PARASOL_C10D_ALGORITHM chooses the
allreduce algorithm (auto, ring, halving-doubling, ...).
"""
import os
import socket

import torch
import torch.distributed as dist

import parasol
from parasol import _parasol

_OMPI = {"RANK": "OMPI_COMM_WORLD_RANK", "WORLD_SIZE": "OMPI_COMM_WORLD_SIZE",
         "LOCAL_RANK": "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_WORLD_SIZE": "OMPI_COMM_WORLD_LOCAL_SIZE"}


def _create(store, rank, size, timeout):
    """torch.distributed's constructor of a "parasol" process group (collective)."""
    del store  # parasol's own transport (MPI) carries everything
    world = parasol.init()
    algorithm = os.environ.get("PARASOL_C10D_ALGORITHM", "auto")
    return _parasol._c10d_backend(world, rank, size, int(timeout.total_seconds() * 1000), algorithm)


def _fill_rendezvous_environment():
    if "OMPI_COMM_WORLD_SIZE" not in os.environ:
        return
    for name, ompi in _OMPI.items():
        if ompi in os.environ:
            os.environ.setdefault(name, os.environ[ompi])
    if "MASTER_ADDR" in os.environ and "MASTER_PORT" in os.environ:
        return
    address = b""
    if parasol.init().rank == 0:
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        address = f"{socket.gethostname()} {port}".encode()
    from parasol.torch import broadcast_bytes
    host, port = broadcast_bytes(address, 0).decode().split()
    os.environ.setdefault("MASTER_ADDR", host)
    os.environ.setdefault("MASTER_PORT", port)


def register():
    if "parasol" not in dist.Backend.backend_list:
        dist.Backend.register_backend("parasol", _create, devices=["cpu", "cuda"])
    _fill_rendezvous_environment()


__all__ = ["register"]
assert torch.distributed.is_available()
