"""parasol from Python: the job's ranks, the collective library on tensors, the gradient
synchroniser under any PyTorch model (parasol.torch) and parameter-server tables (parasol.ps).

    import parasol.torch as pt
    pt.init()                          # MPI; run under mpirun (or alone: one rank)
    opt = pt.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1), model, sync="wfbp")

The job's World (MPI and its context) lives in this module, made by init() and ended by
shutdown() (also at exit); everything else takes it from here or as an argument.
"""
import atexit
import ctypes
import weakref

import torch  # noqa: F401  (first: the extension's tensors are torch's types)

# OpenMPI opens its components with dlopen and they look for libmpi's symbols globally; Python
# loads extensions with their symbols private, so libmpi is made global first.
for _name in ("libmpi.so.40", "libmpi.so"):
    try:
        ctypes.CDLL(_name, mode=ctypes.RTLD_GLOBAL)
        break
    except OSError:
        pass

from . import _parasol  # noqa: E402
from ._parasol import (  # noqa: E402,F401
    AbortedError, Error, InternalError, InvalidArgumentError, IoError, MismatchError, ParseError,
    PeerGoneError, TimeoutError, UnavailableError)

__all__ = ["init", "shutdown", "world", "rank", "size", "local_rank", "local_size", "Error",
           "TimeoutError", "PeerGoneError", "MismatchError", "AbortedError", "InvalidArgumentError"]

_world = None
_closers = weakref.WeakSet()  # synchronisers and servers to close before MPI ends


def init(timeout_ms=60000):
    """Starts MPI (once per process) and returns the World. timeout_ms bounds every blocking call
    that is not given its own: a peer that died or stopped answering is an error naming it."""
    global _world
    if _world is None or _world.closed:
        _world = _parasol.World(timeout_ms=timeout_ms)
    return _world


def world():
    """The World of init(); raises parasol.Error if init() has not run."""
    if _world is None or _world.closed:
        raise UnavailableError("parasol.init() has not been called")
    return _world


def rank():
    return world().rank


def size():
    return world().size


def local_rank():
    """This rank's index among the ranks on its machine."""
    return world().local_rank


def local_size():
    return world().local_size


def _register_closer(obj):
    """obj.close() runs before MPI is finalised (shutdown, exit) if obj is still alive then."""
    _closers.add(obj)


def shutdown():
    """Closes every synchroniser and parameter server still open, then finalises MPI."""
    global _world
    for obj in list(_closers):
        obj.close()
    if _world is not None:
        _world.close()
    _world = None


atexit.register(shutdown)
