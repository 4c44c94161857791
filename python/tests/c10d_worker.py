"""Run under mpirun by test_c10d.py: torch.distributed with the "parasol" backend.
  collectives   every collective on the parasol process group and on a gloo group over the same
                ranks, the same inputs (several dtypes): prints one JSON line per case on rank 0
                with the largest difference between the two results. DEVICE=cuda: the parasol
                group's tensors on this rank's GPU (gloo's on CPU)
  ddp BACKEND   DistributedDataParallel (each rank a slice of every batch) against one process
                training on the whole batch; FSDP2 (fully_shard) too
  stall         rank 1 stops (SIGSTOP) before an all_reduce; rank 0 must raise within the process
                group's timeout (3 s) and the job must end
  mismatch      the ranks all_reduce tensors of different sizes: an error, not a hang
"""
import json
import os
import signal
import sys
from datetime import timedelta

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import launch
import parasol.torch  # noqa: F401  (registers "parasol")

DTYPES = [torch.float32, torch.float64, torch.int64, torch.int32, torch.float16, torch.bfloat16]


DEVICE = None  # where the parasol group's tensors live (set in main)


def inputs(rank, dtype, n, device="cpu"):
    g = torch.Generator().manual_seed(1000 + rank)
    x = torch.randn(n, generator=g) * 4
    return (x.to(dtype) if dtype.is_floating_point else x.round().to(dtype)).to(device)


def cases(rank, size):
    """(name, fn(group) -> result tensors), each run on both groups with fresh inputs. A case's
    tensors live on DEVICE for the parasol group (group None), on CPU for gloo."""
    real_inputs, real_empty = inputs, torch.empty

    def on(g):
        return DEVICE if g is None else "cpu"

    def inputs_for(g):
        return lambda *a: real_inputs(*a, device=on(g))

    def empty_for(g):
        return lambda *a, **k: real_empty(*a, **k, device=on(g))

    ops = [("sum", dist.ReduceOp.SUM), ("max", dist.ReduceOp.MAX), ("min", dist.ReduceOp.MIN),
           ("product", dist.ReduceOp.PRODUCT)]
    out = []
    for dtype in DTYPES:
        d = str(dtype).split(".")[1]
        for opname, op in ops:
            def allreduce(g, dtype=dtype, op=op):
                inputs = inputs_for(g)
                t = inputs(rank, dtype, 37)
                dist.all_reduce(t, op=op, group=g)
                return [t]
            out.append((f"all_reduce {opname} {d}", allreduce))

        def broadcast(g, dtype=dtype):
            inputs = inputs_for(g)
            t = inputs(rank, dtype, 11)
            dist.broadcast(t, src=size - 1, group=g)
            return [t]

        def all_gather(g, dtype=dtype):
            inputs, empty = inputs_for(g), empty_for(g)
            outs = [empty(5, dtype=dtype) for _ in range(size)]
            dist.all_gather(outs, inputs(rank, dtype, 5), group=g)
            return outs

        def all_gather_into_tensor(g, dtype=dtype):
            inputs, empty = inputs_for(g), empty_for(g)
            out = empty(5 * size, dtype=dtype)
            dist.all_gather_into_tensor(out, inputs(rank, dtype, 5), group=g)
            return [out]

        def all_to_all_single(g, dtype=dtype):
            inputs, empty = inputs_for(g), empty_for(g)
            out = empty(3 * size, dtype=dtype)
            dist.all_to_all_single(out, inputs(rank, dtype, 3 * size), group=g)
            return [out]
        out += [(f"broadcast {d}", broadcast), (f"all_gather {d}", all_gather),
                (f"all_gather_into_tensor {d}", all_gather_into_tensor),
                (f"all_to_all_single {d}", all_to_all_single)]

    def average(g):
        inputs = inputs_for(g)
        t = inputs(rank, torch.float32, 17)
        dist.all_reduce(t, op=dist.ReduceOp.AVG, group=g)
        return [t]

    def reduce_scatter_tensor(g):
        inputs, empty = inputs_for(g), empty_for(g)
        out = empty(4)
        dist.reduce_scatter_tensor(out, inputs(rank, torch.float32, 4 * size), group=g)
        return [out]

    def reduce_scatter(g):
        inputs, empty = inputs_for(g), empty_for(g)
        out = empty(3, dtype=torch.float64)
        dist.reduce_scatter(out, list(inputs(rank, torch.float64, 3 * size).chunk(size)), group=g)
        return [out]

    def uneven_all_to_all(g):
        inputs, empty = inputs_for(g), empty_for(g)
        # rank r sends (d + 1) rows of 2 to rank d, and receives r + 1 rows from each
        sends = [d + 1 for d in range(size)]
        recvs = [rank + 1] * size
        out = empty(sum(recvs), 2)
        dist.all_to_all_single(out, inputs(rank, torch.float32, 2 * sum(sends)).view(-1, 2), recvs, sends,
                               group=g)
        return [out]

    def all_to_all(g):
        inputs, empty = inputs_for(g), empty_for(g)
        outs = [empty(2, dtype=torch.int64) for _ in range(size)]
        dist.all_to_all(outs, list(inputs(rank, torch.int64, 2 * size).chunk(size)), group=g)
        return outs

    def reduce(g):
        inputs = inputs_for(g)
        t = inputs(rank, torch.float32, 9)
        dist.reduce(t, dst=0, group=g)
        return [t] if rank == 0 else []

    def gather(g):
        inputs, empty = inputs_for(g), empty_for(g)
        outs = [empty(3) for _ in range(size)] if rank == 0 else None
        dist.gather(inputs(rank, torch.float32, 3), outs, dst=0, group=g)
        return outs or []

    def scatter(g):
        inputs, empty = inputs_for(g), empty_for(g)
        out = empty(3)
        dist.scatter(out, list(inputs(0, torch.float32, 3 * size).chunk(size)) if rank == 0 else None, src=0,
                     group=g)
        return [out]

    def send_recv(g):
        t = inputs(rank, torch.float32, 6)
        if rank == 0:
            for peer in range(1, size):
                dist.send(t, dst=peer, group=g, tag=7)
            return [t]
        dist.recv(t, src=0, group=g, tag=7)
        return [t]

    def barrier(g):
        dist.barrier(group=g)
        return [torch.ones(1)]
    return out + [("all_reduce avg float32", average), ("reduce_scatter_tensor", reduce_scatter_tensor),
                  ("reduce_scatter", reduce_scatter), ("uneven all_to_all_single", uneven_all_to_all),
                  ("all_to_all", all_to_all), ("reduce", reduce), ("gather", gather), ("scatter", scatter),
                  ("send/recv", send_recv), ("barrier", barrier)]


def collectives():
    gloo = dist.new_group(backend="gloo")
    rank, size = dist.get_rank(), dist.get_world_size()
    for name, fn in cases(rank, size):
        if name == "all_reduce avg float32":  # gloo has no AVG: the sum over the ranks
            want = [inputs(rank, torch.float32, 17)]
            dist.all_reduce(want[0], group=gloo)
            want[0] /= size
        elif name == "all_to_all":  # gloo's list form is recent (PyTorch 2.11 lacks it): its single tensor
            out = torch.empty(2 * size, dtype=torch.int64)
            dist.all_to_all_single(out, inputs(rank, torch.int64, 2 * size), group=gloo)
            want = list(out.chunk(size))
        else:
            want = fn(gloo)
        got = fn(None)
        diff = max([float((a.cpu().double() - b.double()).abs().max()) for a, b in zip(got, want)] or [0.0])
        scale = max([float(b.double().abs().max()) for b in want] or [1.0])
        same_shape = [a.shape for a in got] == [b.shape for b in want]
        if rank == 0:
            print(json.dumps({"case": name, "diff": diff, "scale": scale, "shapes": same_shape,
                              "dtype": str(got[0].dtype) if got else None}), flush=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.fc1 = nn.Linear(4 * 6 * 6, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(F.max_pool2d(F.relu(self.conv(x)), 2).flatten(1))))


def batches(steps, batch):
    g = torch.Generator().manual_seed(5)
    return torch.randn(steps, batch, 1, 14, 14, generator=g), torch.randint(0, 10, (steps, batch), generator=g)


def train(model, xs, ys, lo, hi):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for x, y in zip(xs, ys):
        opt.zero_grad()
        F.cross_entropy(model(x[lo:hi]), y[lo:hi]).backward()
        opt.step()


def ddp(kind):
    from torch.distributed.fsdp import fully_shard
    rank, size = dist.get_rank(), dist.get_world_size()
    xs, ys = batches(6, 8 * size)
    torch.manual_seed(3)
    reference = Net()
    train(reference, xs, ys, 0, 8 * size)
    # DDP starts from rank 0's parameters whatever the others hold; FSDP shards each rank's own.
    torch.manual_seed(3 + rank if kind == "ddp" else 3)
    model = Net().to(DEVICE)
    xs, ys = xs.to(DEVICE), ys.to(DEVICE)
    if kind == "ddp":
        wrapped = nn.parallel.DistributedDataParallel(model)
    else:
        fully_shard(model.fc1)
        wrapped = fully_shard(model)
    train(wrapped, xs, ys, 8 * rank, 8 * rank + 8)
    if kind == "fsdp":
        params = [p.full_tensor().cpu() for p in model.parameters()]
    else:
        params = [p.detach().cpu() for p in model.parameters()]
    diff = max(float((a - b).abs().max()) for a, b in zip(params, reference.parameters()))
    spread = max(float((dist_max(p) - dist_min(p)).abs().max()) for p in params)
    if rank == 0:
        print(json.dumps({"case": kind, "diff": diff, "spread": spread}), flush=True)


def dist_max(t):
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t


def dist_min(t):
    t = t.clone()
    dist.all_reduce(t, op=dist.ReduceOp.MIN)
    return t


def report(line):
    launch.write_result(dist.get_rank(), line)


def stall():
    t = torch.ones(1000)
    dist.all_reduce(t)
    if dist.get_rank() == 1:
        os.kill(os.getpid(), signal.SIGSTOP)
    try:
        dist.all_reduce(t)
    except Exception as e:  # noqa: BLE001  (the test reads the type)
        report({"rank": dist.get_rank(), "type": type(e).__name__, "message": str(e),
                "timeout": isinstance(e, TimeoutError)})
        raise


def mismatch():
    t = torch.ones(100 + dist.get_rank())
    try:
        dist.all_reduce(t)
    except Exception as e:  # noqa: BLE001
        report({"rank": dist.get_rank(), "type": type(e).__name__, "message": str(e)})
        raise


def main():
    global DEVICE
    mode = sys.argv[1]
    backend = sys.argv[2] if len(sys.argv) > 2 else "parasol"
    timeout = timedelta(seconds=3) if mode in ("stall", "mismatch") else timedelta(seconds=60)
    dist.init_process_group(backend, timeout=timeout)
    DEVICE = "cpu"
    if os.environ.get("DEVICE") == "cuda":
        DEVICE = f"cuda:{int(os.environ.get('LOCAL_RANK', 0)) % torch.cuda.device_count()}"
    {"collectives": collectives, "ddp": lambda: ddp("ddp"), "fsdp": lambda: ddp("fsdp"),
     "stall": stall, "mismatch": mismatch}[mode]()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
