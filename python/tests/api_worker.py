"""Run under mpirun by test_torch.py (2 ranks): parasol.torch's helpers that are not a training step.
Prints one JSON line per check on rank 0: {"check": ..., "ok": bool, "detail": ...}.
  broadcast_parameters  a Module, its state_dict and named_parameters(): every rank ends with
                        rank 0's values (the ranks start from different seeds)
  broadcast_optimizer_state  Adam's state, which only rank 0 has, reaches rank 1 equal
  add_param_group       a layer frozen for 3 steps, then unfrozen and added: the replicas stay
                        equal and match one process doing the same on the combined batch
"""
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

import parasol
import parasol.torch as pt


def report(check, ok, detail=""):
    if parasol.rank() == 0:
        print(json.dumps({"check": check, "ok": bool(ok), "detail": detail}), flush=True)


def spread(tensors):
    """The largest difference between the ranks' copies."""
    return max(float((pt.allreduce(t.detach().float(), op="max") - pt.allreduce(t.detach().float(), op="min"))
                     .abs().max()) for t in tensors)


def net(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Linear(16, 3))


def broadcast_parameters():
    for form in ("module", "state_dict", "named_parameters"):
        model = net(10 + parasol.rank())
        model(torch.randn(4, 8))  # moves the batch-norm statistics
        target = {"module": model, "state_dict": model.state_dict(),
                  "named_parameters": model.named_parameters()}[form]
        before = spread(model.parameters())
        pt.broadcast_parameters(target)
        tensors = list(model.parameters()) + (list(model.buffers()) if form != "named_parameters" else [])
        after = spread(tensors)
        report(f"broadcast_parameters({form})", before > 0 and after == 0.0, f"before {before}, after {after}")


def broadcast_optimizer_state():
    model = net(1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    if parasol.rank() == 0:
        F.cross_entropy(model(torch.randn(4, 8)), torch.tensor([0, 1, 2, 0])).backward()
        opt.step()
    pt.broadcast_optimizer_state(opt)
    state = [opt.state[p][k] for p in model.parameters() for k in ("exp_avg", "exp_avg_sq")]
    steps = pt.allreduce(torch.tensor([float(opt.state[p]["step"]) for p in model.parameters()]), op="min")
    report("broadcast_optimizer_state", spread(state) == 0.0 and float(steps.min()) == 1.0,
           f"spread {spread(state)}, steps {steps.tolist()}")


def train_with_late_group(distributed):
    torch.manual_seed(5)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    for p in model[0].parameters():
        p.requires_grad_(False)
    opt = torch.optim.SGD(model[2].parameters(), lr=0.1, momentum=0.9)
    if distributed:
        opt = pt.DistributedOptimizer(opt, model)
    g = torch.Generator().manual_seed(9)
    for step in range(6):
        if step == 3:
            for p in model[0].parameters():
                p.requires_grad_(True)
            opt.add_param_group({"params": list(model[0].parameters()), "lr": 0.05})
        x, y = torch.randn(8, 8, generator=g), torch.randint(0, 3, (8,), generator=g)
        if distributed:
            x, y = x[parasol.rank()::parasol.size()], y[parasol.rank()::parasol.size()]
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    if distributed:
        opt.close()
    return list(model.parameters())


def add_param_group():
    want = train_with_late_group(False)
    got = train_with_late_group(True)
    diff = max(float((a - b).abs().max()) for a, b in zip(got, want))
    report("add_param_group", diff < 2e-6 and spread(got) == 0.0, f"diff {diff}")


def main():
    parasol.init(timeout_ms=30000)
    broadcast_parameters()
    broadcast_optimizer_state()
    add_param_group()
    parasol.shutdown()


if __name__ == "__main__":
    main()
