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

import torch  # (first: the extension's tensors are torch's types, its libtorch the one loaded)

from ._build_info import TORCH_VERSION as _BUILT_FOR

if torch.__version__ != _BUILT_FOR:
    raise ImportError(
        f"parasol was built against torch {_BUILT_FOR}, but this environment's torch is "
        f"{torch.__version__}: its C++ library differs. Rebuild parasol here "
        f"(pip install --force-reinstall --no-deps .) or install torch=={_BUILT_FOR.split('+')[0]}")

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

# The errors stay out of `from parasol import *`: parasol.TimeoutError would shadow the built-in
# it derives from (as InvalidArgumentError and ParseError derive from ValueError, IoError from
# OSError, PeerGoneError from ConnectionError), so `except TimeoutError:` catches parasol's too.
__all__ = ["init", "shutdown", "world", "rank", "size", "local_rank", "local_size"]

_world = None
_closers = weakref.WeakSet()  # synchronisers and servers to close before MPI ends


def init(timeout_ms=None):
    """Starts MPI (once per process) and returns the World. timeout_ms (default 60 s) bounds every
    blocking call that is not given its own: a peer that died or stopped answering is an error
    naming it. Called again, it returns the same World, with timeout_ms if given."""
    global _world
    if _world is None or _world.closed:
        _world = _parasol.World(timeout_ms=timeout_ms or 60000)
    elif timeout_ms is not None:
        _world.timeout_ms = timeout_ms
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
    """Closes every synchroniser and parameter server still open, then finalises MPI. After a
    communication error (a peer that stopped answering, a mismatch) MPI cannot be finalised, as
    that waits for every rank: the job is aborted instead (mpirun ends every rank, exit code 1),
    so a failed job ends rather than hangs."""
    global _world
    for obj in list(_closers):
        obj.close()
    if _world is not None:
        _world.close()
    _world = None


atexit.register(shutdown)
