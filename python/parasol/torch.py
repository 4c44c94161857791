"""parasol under any PyTorch model: the deep-learning engine's gradient synchronisation (flat
buffers, wait-free backpropagation, DDP-like buckets, P3's slices and priorities, sufficient-factor
broadcasting for nn.Linear, weight-update sharding, the parameter server) behind a wrapper of the
user's optimizer, and the collectives on tensors.

    import parasol.torch as pt
    pt.init()
    model = torchvision.models.resnet18()
    opt = pt.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                  model, sync="wfbp")
    for x, y in batches:                  # this rank's share of the global batch
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()

Rules of a step: one forward of the model with gradients on, one backward, then step(). When
backward returns the gradients are averaged over the ranks (as under DDP) and step() is the
wrapped optimizer's own. With overlap_update=True, SGD and AdamW run inside the engine instead,
each parameter updated the moment its gradient is reduced (P3 lets the next forward start before
the last layers are updated). `import parasol.torch` also registers the torch.distributed backend
"parasol" (parasol.c10d).
"""
import ctypes
import io
import os
import tempfile

import torch
import torch.nn.functional as F

import parasol
from parasol import _parasol
from parasol import init, local_rank, local_size, rank, shutdown, size  # noqa: F401

SYNC_MODES = ("after-backward", "buckets", "wfbp", "p3")
COMMS = ("allreduce", "ps", "hybrid")


def allreduce(tensor, op="avg", algorithm="auto", timeout_ms=0):
    """A new tensor: op ("avg", "sum", "max", "min", "prod") over every rank's tensor."""
    return parasol.world().allreduce(tensor, op=op, algorithm=algorithm, timeout_ms=timeout_ms)


def allgather(tensor, timeout_ms=0):
    """Every rank's tensor (equal shapes) concatenated along the first dimension, in rank order."""
    return parasol.world().allgather(tensor, timeout_ms=timeout_ms)


def broadcast(tensor, root=0, timeout_ms=0):
    """Writes the root's values into tensor on every rank and returns it."""
    with torch.no_grad():
        return parasol.world().broadcast(tensor, root=root, timeout_ms=timeout_ms)


def alltoall(tensor, timeout_ms=0):
    """The first dimension cut into size() equal blocks; block d goes to rank d."""
    return parasol.world().alltoall(tensor, timeout_ms=timeout_ms)


def barrier(timeout_ms=0):
    parasol.world().barrier(timeout_ms=timeout_ms)


def broadcast_parameters(params, root=0):
    """Every rank takes the root's values. params: a Module (its parameters and buffers), a
    state_dict, named_parameters() or any iterable of tensors or (name, tensor) pairs."""
    if isinstance(params, torch.nn.Module):
        params = params.state_dict()
    if isinstance(params, dict):
        params = params.values()
    for p in params:
        if isinstance(p, tuple):
            p = p[1]
        if not torch.is_tensor(p):
            raise TypeError(f"broadcast_parameters: {type(p).__name__} is not a tensor")
        if p.dtype in (torch.float32, torch.float64, torch.int32, torch.int64):
            broadcast(p.data if isinstance(p, torch.nn.Parameter) else p, root)


def broadcast_bytes(payload, root=0):
    """The root's bytes on every rank (the others pass anything, b"" say). Collective."""
    n = broadcast(torch.tensor([len(payload)], dtype=torch.int64), root)[0].item()
    words = torch.zeros((n + 3) // 4, dtype=torch.int32)
    if parasol.rank() == root and n:
        words.view(torch.uint8)[:n] = torch.frombuffer(bytearray(payload), dtype=torch.uint8)
    broadcast(words, root)
    return ctypes.string_at(words.data_ptr(), n)  # numpy is not one of torch's dependencies


def broadcast_optimizer_state(optimizer, root=0):
    """Every rank's optimizer takes the root's state (as after a resume on rank 0 only): its
    state_dict, sent as bytes. Collective."""
    state = optimizer.state_dict()  # on every rank: collective for a sharded DistributedOptimizer
    payload = b""
    if parasol.rank() == root:
        buf = io.BytesIO()
        torch.save(state, buf)
        payload = buf.getvalue()
    payload = broadcast_bytes(payload, root)
    if parasol.rank() != root:
        optimizer.load_state_dict(torch.load(io.BytesIO(payload), weights_only=True))


class _SfbLinear(torch.autograd.Function):
    """y = x W^T + b whose backward hands (dy, x) to the synchroniser instead of forming dW, db."""

    @staticmethod
    def forward(ctx, x, weight, bias, port):
        ctx.save_for_backward(x, weight)
        ctx.port = port
        return F.linear(x, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        # dx before the factors leave: once sent, the engine may update the weight (overlap_update).
        grad_x = grad.matmul(weight) if ctx.needs_input_grad[0] else None
        ctx.port.send(grad.reshape(-1, grad.shape[-1]).contiguous(), x.reshape(-1, x.shape[-1]).contiguous())
        return grad_x, None, None, None


def _engine_optimizer(optimizer):
    """The engine's settings to run optimizer itself, or None where it cannot (one parameter
    group of torch.optim.SGD without Nesterov or dampening, or of AdamW without amsgrad)."""
    if len(optimizer.param_groups) != 1:
        return None
    g = optimizer.param_groups[0]
    if isinstance(optimizer, torch.optim.SGD) and not g.get("nesterov") and not g.get("dampening") \
            and not g.get("maximize"):
        return {"kind": "sgd", "lr": g["lr"], "momentum": g["momentum"], "weight_decay": g["weight_decay"]}
    if isinstance(optimizer, torch.optim.AdamW) and not g.get("amsgrad") and not g.get("maximize"):
        return {"kind": "adamw", "lr": g["lr"], "beta1": g["betas"][0], "beta2": g["betas"][1],
                "eps": g["eps"], "weight_decay": g["weight_decay"]}
    return None


def DistributedOptimizer(optimizer, model, sync="wfbp", comm="allreduce", bucket_mb=25,
                         slice_elements=50000, shard_updates=False, staleness=0, batch_per_rank=None,
                         timeout_ms=None, overlap_update=False, mirror_parameters=False):
    """Wraps optimizer (built over model's parameters) so that every step applies the gradient
    averaged over the ranks. Returns an instance of the optimizer's own class (as Horovod does),
    so lr schedulers, GradScaler, state_dict / load_state_dict and add_param_group work on it.
    Collective: every rank builds it at the same point; rank 0's parameters and buffers are
    broadcast, so the replicas start equal.

    By default a step is DDP's: the reductions run during backward, and when backward returns
    every gradient is the average (read it, clip it, unscale it), then step() is the optimizer's
    own. overlap_update=True (SGD or AdamW with one parameter group) lets the engine update each
    parameter the moment its gradient is reduced, during backward, and with sync="p3" the next
    forward waits only for each layer's own update: faster, but the update happens before
    step(), so nothing may change the gradients in between (no clipping, no GradScaler).

    sync: "after-backward" (one reduction after backward), "buckets" (DDP's ~bucket_mb buckets),
          "wfbp" (a layer's reduction starts as soon as its gradient is final), "p3" (slices of
          slice_elements, the one nearest the input first).
    comm: "allreduce", "ps" (gradients through the parameter server; staleness > 0 is SSP),
          "hybrid" (sufficient-factor broadcasting for the nn.Linear layers where it moves fewer
          bytes than a parameter server would, by the cost model with batch_per_rank rows).
    shard_updates: (overlap_update) each rank updates a block of every reduction and all-gathers
          the parameters.
    timeout_ms: how long any wait may take before the error naming the rank and the operation.
    mirror_parameters: keep the engine's buffers in host memory beside the parameters rather than
          making the parameters views of them: what it does for parameters on a GPU (each
          gradient staged to host memory as it becomes final, each updated parameter or averaged
          gradient copied back); on CPU, to run that path without a GPU.
    """
    base = type(optimizer)
    methods = {k: v for k, v in _DistributedOptimizer.__dict__.items() if k not in ("__dict__", "__weakref__")}
    cls = type(base.__name__, (base,), methods)
    return cls(optimizer, model, sync=sync, comm=comm, bucket_mb=bucket_mb, slice_elements=slice_elements,
               shard_updates=shard_updates, staleness=staleness, batch_per_rank=batch_per_rank,
               timeout_ms=timeout_ms, overlap_update=overlap_update, mirror_parameters=mirror_parameters)


class _DistributedOptimizer:
    """The methods DistributedOptimizer's class adds to (or puts over) the wrapped optimizer's."""

    def __init__(self, optimizer, model, sync, comm, bucket_mb, slice_elements, shard_updates, staleness,
                 batch_per_rank, timeout_ms, overlap_update, mirror_parameters):
        if sync not in SYNC_MODES:
            raise ValueError(f"sync={sync!r}: one of {', '.join(SYNC_MODES)}")
        if comm not in COMMS:
            raise ValueError(f"comm={comm!r}: one of {', '.join(COMMS)}")
        if comm == "hybrid" and not batch_per_rank:
            raise ValueError("comm='hybrid' needs batch_per_rank (the rows each rank's layers see per step)")
        engine = _engine_optimizer(optimizer)
        if overlap_update and engine is None:
            raise ValueError(f"overlap_update=True runs the update in parasol's engine, which has SGD (no "
                             f"Nesterov or dampening) and AdamW (no amsgrad) with one parameter group; "
                             f"this is {type(optimizer).__name__} with {len(optimizer.param_groups)} group(s)")
        if shard_updates and not overlap_update:
            raise ValueError("shard_updates=True needs overlap_update=True (the engine updates the shards)")
        _adopt(self, optimizer)
        self._parasol = {
            "model": model, "overlap": bool(overlap_update), "engine": engine if overlap_update else None,
            "options": dict(mode=sync, backend=comm, bucket_bytes=int(bucket_mb * (1 << 20)),
                            slice_elements=slice_elements, shard_updates=shard_updates, ps_staleness=staleness,
                            batch_per_rank=batch_per_rank or 32, timeout_ms=timeout_ms or 0,
                            mirror_parameters=mirror_parameters),
            "sync": None, "handles": [], "step": 0, "armed": False, "engine_state": False,
            "base_lr": optimizer.param_groups[0]["lr"],
        }
        if overlap_update:
            self._step_supports_amp_scaling = True  # so that step() sees a GradScaler, and refuses it
        self._build_engine()
        parasol._register_closer(self)

    # ---- the engine under the optimizer ----

    def _build_engine(self):
        """(Re)builds the synchroniser over the model's parameters this optimizer trains."""
        st = self._parasol
        model = st["model"]
        stages, stage_modules, fc = _layout(model, self, st["options"]["backend"] == "hybrid")
        buffers = [b for b in model.buffers() if b.dtype == torch.float32 and b.is_contiguous()]
        st["params"] = [p for stage in stages for p in stage]  # the engine's flat order
        st["sync"] = _parasol.GradSync(
            parasol.world(), stages, [(s, n, m.weight, m.bias) for s, n, m in fc], buffers,
            st["engine"] or {"kind": "external"}, **st["options"])
        if st["overlap"] or st["options"]["backend"] == "ps":
            for i, m in enumerate(stage_modules):
                st["handles"].append(m.register_forward_pre_hook(
                    lambda _m, _inp, i=i: self._parasol["sync"].before_stage(i)))
        st["handles"].append(model.register_forward_hook(self._after_forward))
        for port, (_, _, module) in zip(st["sync"].ports, fc):
            if port.active:
                st["handles"].append(_use_factors(module, port))

    def _sync(self):
        sync = self._parasol["sync"]
        if sync is None:
            raise parasol.UnavailableError("the DistributedOptimizer is closed (parasol.shutdown() ran)")
        return sync

    def _after_forward(self, _module, _inputs, output):
        """The step starts when backward reaches the model's output: then no gradient of the
        model's parameters has been accumulated yet, and a forward without backward starts none."""
        if not torch.is_grad_enabled() or not self._parasol["model"].training:
            return
        self._parasol["armed"] = False
        for t in _tensors(output):
            if t.requires_grad:
                t.register_hook(self._before_backward)

    def _before_backward(self, grad):
        st = self._parasol
        if not st["armed"]:
            st["armed"] = True
            lr = self.param_groups[0]["lr"]
            self._sync().before_backward(st["step"], lr / st["base_lr"] if st["base_lr"] else 1.0)
            if not st["overlap"]:
                torch.autograd.Variable._execution_engine.queue_callback(self._end_of_backward)
        return grad

    def _end_of_backward(self):
        """DDP's contract: when backward returns, every gradient is the average over the ranks."""
        sync = self._sync()
        sync.after_backward()
        sync.flush()

    # ---- the optimizer's interface ----

    def step(self, closure=None):
        st = self._parasol
        if not st["overlap"]:
            loss = super(self.__class__, self).step(closure)
            st["step"] += 1
            return loss
        if closure is not None:
            raise ValueError("step(closure) needs overlap_update=False: the engine has already updated")
        if getattr(self, "grad_scale", None) is not None or getattr(self, "found_inf", None) is not None:
            raise ValueError("GradScaler unscales the gradients before the update, but with overlap_update=True "
                             "the engine updates during backward: use overlap_update=False")
        if not st["armed"]:
            raise parasol.Error(f"rank {parasol.rank()}: step() without a backward through the model")
        st["armed"] = False
        self._sync().after_backward()
        st["step"] += 1
        st["engine_state"] = True
        return None

    def zero_grad(self, set_to_none=True):
        """As the optimizer's (gradients set to None by default, as PyTorch 2 does): the engine
        points them at its buffer again when the next backward starts."""
        if self._parasol["overlap"]:
            self.synchronize()  # the engine may still be reading them
        super(self.__class__, self).zero_grad(set_to_none)

    def add_param_group(self, param_group):
        """Adds the group and (collective) rebuilds the synchroniser over the new parameters."""
        super(self.__class__, self).add_param_group(param_group)
        st = getattr(self, "_parasol", None)
        if st is None or st["sync"] is None:  # during __init__: the engine is built after
            return
        if st["overlap"]:
            raise ValueError("add_param_group needs overlap_update=False (the engine runs one group)")
        self.synchronize()
        self._close_engine()
        self._build_engine()

    def state_dict(self):
        """The optimizer's own state_dict (with overlap_update, the engine's momentum or moments
        in PyTorch's format): it loads into the same optimizer without parasol. Collective under
        shard_updates (the shards are gathered)."""
        self.synchronize()
        if self._parasol["overlap"]:
            self._export_engine_state()
        return super(self.__class__, self).state_dict()

    def load_state_dict(self, state_dict):
        self.synchronize()
        super(self.__class__, self).load_state_dict(state_dict)
        if self._parasol["overlap"]:
            self._import_engine_state()

    def synchronize(self):
        """Waits for every pending reduction and update (before evaluating or saving)."""
        if self._parasol["sync"] is not None:
            self._parasol["sync"].flush()

    def stats(self):
        """wait_seconds (the training thread blocked on synchronisation), bytes_sent, units_done."""
        return self._sync().stats()

    def layer_choices(self):
        """comm='hybrid': per nn.Linear, the bytes each scheme would move and whether SFB won."""
        return self._sync().layer_choices()

    @property
    def num_units(self):
        return self._sync().num_units

    def close(self):
        """Stops the communication thread and removes the hooks (also at shutdown)."""
        self._close_engine()

    def _close_engine(self):
        st = self._parasol
        if st["sync"] is not None:
            for h in st["handles"]:
                h.remove()
            st["handles"] = []
            st["sync"].close()
            st["sync"] = None

    # ---- the engine's optimizer state in PyTorch's format ----

    def _export_engine_state(self):
        st = self._parasol
        if not st["engine_state"]:
            return  # no step taken: PyTorch's optimizers have no state yet either
        first, second = self._sync().optimizer_state()
        kind = st["engine"]["kind"]
        for p, (begin, n) in zip(st["params"], self._sync().spans):
            state = self.state[p]
            if kind == "sgd":
                if st["engine"]["momentum"]:
                    state["momentum_buffer"] = first[begin:begin + n].view_as(p).to(p.device, copy=True)
            else:
                state["step"] = torch.tensor(float(st["step"]))
                state["exp_avg"] = first[begin:begin + n].view_as(p).to(p.device, copy=True)
                state["exp_avg_sq"] = second[begin:begin + n].view_as(p).to(p.device, copy=True)

    def _import_engine_state(self):
        st = self._parasol
        sync = self._sync()
        first, second = sync.optimizer_state()
        first.zero_()
        second.zero_()
        steps = []
        for p, (begin, n) in zip(st["params"], sync.spans):
            state = self.state.get(p, {})
            if state.get("momentum_buffer") is not None:
                first[begin:begin + n].copy_(state["momentum_buffer"].reshape(-1))
            if "exp_avg" in state:
                first[begin:begin + n].copy_(state["exp_avg"].reshape(-1))
                second[begin:begin + n].copy_(state["exp_avg_sq"].reshape(-1))
                steps.append(int(state["step"]))
        sync.load_optimizer_state([first, second])
        st["engine_state"] = bool(self.state)
        if steps:
            st["step"] = max(steps)


def _adopt(new, optimizer):
    """Makes `new` (of a subclass of optimizer's class) the same optimizer: its groups and state."""
    base = type(optimizer)
    try:
        base.__init__(new, optimizer.param_groups)
    except TypeError:  # an optimizer whose constructor needs more than its groups
        torch.optim.Optimizer.__init__(new, optimizer.param_groups, optimizer.defaults)
    new.defaults = optimizer.defaults
    for p, s in optimizer.state.items():
        new.state[p] = s


def _layout(model, optimizer, hybrid):
    """Stages: the modules that hold parameters directly, in registration order (forward order
    for the usual models); only parameters the optimizer trains and that need gradients."""
    trained = {id(p) for g in optimizer.param_groups for p in g["params"]}
    stages, modules, fc = [], [], []
    for name, m in model.named_modules():
        params = [p for p in m.parameters(recurse=False) if p.requires_grad and id(p) in trained]
        if not params:
            continue
        if hybrid and isinstance(m, torch.nn.Linear) and m.bias is not None \
                and m.bias.requires_grad and len(params) == 2:
            fc.append((len(stages), name, m))
        stages.append(params)
        modules.append(m)
    missing = trained - {id(p) for s in stages for p in s}
    if missing:
        raise ValueError(f"{len(missing)} of the optimizer's parameters are not the model's (or need no gradient)")
    return stages, modules, fc


def _tensors(output):
    if torch.is_tensor(output):
        return [output]
    if isinstance(output, dict):
        output = list(output.values())
    if isinstance(output, (list, tuple)):
        return [t for o in output for t in _tensors(o)]
    return []


def _use_factors(module, port):
    """module's forward runs through _SfbLinear from now on (until the handle is removed)."""
    def forward(x):
        return _SfbLinear.apply(x, module.weight, module.bias, port)
    module.forward = forward

    class Handle:
        @staticmethod
        def remove():
            del module.forward
    return Handle()


def save_checkpoint(path, model, optimizer=None, **extra):
    """Rank 0 writes model's and optimizer's state (and extra) to path atomically (a synced
    temporary file renamed over it); every rank returns once it is written. Collective when the
    optimizer is a DistributedOptimizer."""
    state = {"model": model.state_dict(), **extra}
    if optimizer is not None:
        state["optimizer"] = optimizer.state_dict()
    if parasol.rank() == 0:
        folder = os.path.dirname(os.path.abspath(path))
        with tempfile.NamedTemporaryFile(dir=folder, delete=False) as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(f.name, path)
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    barrier()


def load_checkpoint(path, model, optimizer=None):
    """Every rank reads path (it must be readable on every rank, as for torch.load in a DDP
    script) into model and optimizer; returns the extra entries save_checkpoint was given
    (tensors, numbers, strings and containers of them: torch.load's weights_only)."""
    state = torch.load(path, weights_only=True)
    model.load_state_dict(state["model"])  # copies into the parameters: the engine's views stay
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    return {k: v for k, v in state.items() if k not in ("model", "optimizer")}


# torch.distributed's backend "parasol" (see parasol.c10d).
from parasol import c10d as _c10d  # noqa: E402

_c10d.register()
