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

Rules of a step: one forward of the model with gradients on, one backward, then step(). The
gradients are averaged over the ranks; SGD (no Nesterov, no dampening) and AdamW with one
parameter group run inside the engine, each parameter updated the moment its gradient is reduced
(P3 lets the next forward start before the last layers are updated). Any other optimizer runs as
given, on the averaged gradients, once they are all in.
"""
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
    """Every rank takes the root's values: params is a state_dict, named_parameters() or a list."""
    if isinstance(params, dict):
        params = list(params.values())
    for p in params:
        if isinstance(p, tuple):
            p = p[1]
        if torch.is_tensor(p) and p.dtype in (torch.float32, torch.float64, torch.int32, torch.int64):
            broadcast(p.data if isinstance(p, torch.nn.Parameter) else p, root)


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
        ctx.port.send(grad.reshape(-1, grad.shape[-1]).contiguous(), x.reshape(-1, x.shape[-1]).contiguous())
        grad_x = grad.matmul(weight) if ctx.needs_input_grad[0] else None
        return grad_x, None, None, None


def _engine_optimizer(optimizer):
    """The engine's optimizer settings for optimizer, or kind "external" if it cannot run it."""
    if len(optimizer.param_groups) != 1:
        return {"kind": "external"}
    g = optimizer.param_groups[0]
    if type(optimizer) is torch.optim.SGD and not g.get("nesterov") and not g.get("dampening") \
            and not g.get("maximize"):
        return {"kind": "sgd", "lr": g["lr"], "momentum": g["momentum"], "weight_decay": g["weight_decay"]}
    if type(optimizer) is torch.optim.AdamW and not g.get("amsgrad") and not g.get("maximize"):
        return {"kind": "adamw", "lr": g["lr"], "beta1": g["betas"][0], "beta2": g["betas"][1],
                "eps": g["eps"], "weight_decay": g["weight_decay"]}
    return {"kind": "external"}


class DistributedOptimizer:
    """Wraps optimizer (built over model's parameters) so that step() applies the gradient averaged
    over every rank. Collective: every rank builds it at the same point; rank 0's parameters and
    buffers are broadcast, so the replicas start equal.

    sync: "after-backward" (one reduction after backward), "buckets" (DDP's ~bucket_mb buckets),
          "wfbp" (a layer's reduction starts as soon as its gradient is final), "p3" (slices of
          slice_elements, the one nearest the input first; the next forward waits per layer).
    comm: "allreduce", "ps" (gradients through the parameter server; staleness > 0 is SSP),
          "hybrid" (sufficient-factor broadcasting for the nn.Linear layers where it moves fewer
          bytes than a parameter server would, by the cost model with batch_per_rank rows).
    shard_updates: each rank updates a block of every reduction and all-gathers the parameters.
    timeout_ms: how long any wait may take before the error naming the rank and the operation.
    """

    def __init__(self, optimizer, model, sync="wfbp", comm="allreduce", bucket_mb=25,
                 slice_elements=50000, shard_updates=False, staleness=0, batch_per_rank=None,
                 timeout_ms=None):
        if sync not in SYNC_MODES:
            raise ValueError(f"sync={sync!r}: one of {', '.join(SYNC_MODES)}")
        if comm not in COMMS:
            raise ValueError(f"comm={comm!r}: one of {', '.join(COMMS)}")
        if comm == "hybrid" and not batch_per_rank:
            raise ValueError("comm='hybrid' needs batch_per_rank (the rows each rank's layers see per step)")
        world = parasol.world()
        self.optimizer = optimizer
        self.model = model
        self.sync_mode, self.comm = sync, comm
        self._engine = _engine_optimizer(optimizer)
        self._base_lr = optimizer.param_groups[0]["lr"]
        self._step = 0
        self._armed = False  # this forward's hook has started the step's backward
        stages, stage_modules, fc = self._layout(model, optimizer, comm == "hybrid")
        buffers = [b for b in model.buffers() if b.dtype == torch.float32 and b.is_contiguous()]
        self._sync = _parasol.GradSync(
            world, stages, [(s, n, m.weight, m.bias) for s, n, m in fc], buffers, self._engine,
            mode=sync, backend=comm, bucket_bytes=int(bucket_mb * (1 << 20)), slice_elements=slice_elements,
            shard_updates=shard_updates, ps_staleness=staleness, batch_per_rank=batch_per_rank or 32,
            timeout_ms=timeout_ms or 0)
        parasol._register_closer(self)
        self._handles = []
        self._hook_model(stage_modules)
        for port, (_, _, module) in zip(self._sync.ports, fc):
            if port.active:
                self._handles.append(_use_factors(module, port))

    @staticmethod
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
            raise ValueError(f"{len(missing)} of the optimizer's parameters are not the model's")
        return stages, modules, fc

    def _hook_model(self, stage_modules):
        if self.sync_mode == "p3" or self.comm == "ps":
            for i, m in enumerate(stage_modules):
                self._handles.append(m.register_forward_pre_hook(
                    lambda _m, _inp, i=i: self._sync.before_stage(i)))
        self._handles.append(self.model.register_forward_hook(self._after_forward))

    def _after_forward(self, _module, _inputs, output):
        """The step starts when backward reaches the model's output: then no gradient of the
        model's parameters has been accumulated yet, and a forward without backward starts none."""
        if not torch.is_grad_enabled() or not self.model.training:
            return
        self._armed = False
        for t in _tensors(output):
            if t.requires_grad:
                t.register_hook(self._before_backward)

    def _before_backward(self, grad):
        if not self._armed:
            self._armed = True
            lr = self.optimizer.param_groups[0]["lr"]
            self._sync.before_backward(self._step, lr / self._base_lr if self._base_lr else 1.0)
        return grad

    def zero_grad(self, set_to_none=False):
        """Nothing to do: the engine zeroes the gradients (views of its flat buffer) as backward
        starts, and they must stay tensors."""

    def step(self, closure=None):
        if closure is not None:
            raise ValueError("step(closure) is not supported: run forward and backward, then step()")
        if not self._armed:
            raise parasol.Error(f"rank {parasol.rank()}: step() without a backward through the model")
        self._armed = False
        self._sync.after_backward()
        if self._engine["kind"] == "external":
            self._sync.flush()
            self.optimizer.step()
        self._step += 1

    def synchronize(self):
        """Waits for every pending update (before evaluating or saving)."""
        self._sync.flush()

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def stats(self):
        """wait_seconds (the training thread blocked on synchronisation), bytes_sent, units_done."""
        return self._sync.stats()

    def layer_choices(self):
        """comm='hybrid': per nn.Linear, the bytes each scheme would move and whether SFB won."""
        return self._sync.layer_choices()

    @property
    def num_units(self):
        return self._sync.num_units

    def state_dict(self):
        self.synchronize()
        return {"step": self._step, "optimizer": self.optimizer.state_dict(),
                "engine": self._sync.optimizer_state() if self._engine["kind"] != "external" else []}

    def load_state_dict(self, state):
        self.synchronize()
        self._step = state["step"]
        self.optimizer.load_state_dict(state["optimizer"])
        if state["engine"]:
            self._sync.load_optimizer_state(state["engine"])

    def close(self):
        """Stops the communication thread and removes the hooks (also at shutdown)."""
        if self._sync is not None:
            for h in self._handles:
                h.remove()
            self._sync.close()
            self._sync = None


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
    script) into model and optimizer; returns the extra entries save_checkpoint was given."""
    state = torch.load(path)
    model.load_state_dict(state["model"])  # copies into the parameters: the engine's views stay
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    return {k: v for k, v in state.items() if k not in ("model", "optimizer")}
