"""Run under mpirun by test_torch.py: trains a small CNN with parasol.torch.DistributedOptimizer,
each rank on its slice of every global batch, for each configuration given, and compares the
parameters with plain PyTorch training the same model on the whole batch in one process. Prints
one JSON line per configuration on rank 0: {"config": ..., "max_diff": ..., "scale": ...}.

A configuration names the sync mode and backend and, besides, how the script uses PyTorch:
  optimizer  sgd (momentum), sgd0 (none), adam, adamw
  overlap    overlap_update=True (the engine updates during backward)
  zero       how gradients are cleared: "opt" (opt.zero_grad(), PyTorch 2's set_to_none),
             "model" (model.zero_grad()), "inner" (the wrapped optimizer's zero_grad()), "keep"
             (opt.zero_grad(set_to_none=False))
  scheduler  "step": StepLR(step_size=3, gamma=0.5) on the returned optimizer
  clip       clip_grad_norm_ to this norm between backward and step
  scaler     a GradScaler (init_scale 1024) around backward and step
  resume     half the steps, save_checkpoint, a new model and optimizer, load_checkpoint, the rest
  compile    torch.compile(model, backend=...) before training
  mirror     mirror_parameters=True: the engine's GPU path (host buffers beside the parameters)
  device     "cuda": the model and batches on this rank's GPU (the reference stays on CPU)"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import parasol
import parasol.torch as pt


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 12, 3)
        self.fc1 = nn.Linear(12 * 3 * 3, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc2(F.relu(self.fc1(x.flatten(1))))


def make_optimizer(name, params):
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-4)
    if name == "sgd0":
        return torch.optim.SGD(params, lr=0.05)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01)
    if name == "adam":  # not one the engine runs: stepped in Python on the averaged gradients
        return torch.optim.Adam(params, lr=1e-3)
    raise ValueError(name)


def data(steps, batch):
    """Two batches, alternating: the loss on each falls as the model learns."""
    xs, ys = distinct(2, batch)
    return xs.repeat(steps // 2, 1, 1, 1, 1), ys.repeat(steps // 2, 1)


def distinct(steps, batch):
    g = torch.Generator().manual_seed(7)
    # Digit-like inputs: a class-dependent blob plus noise, so the loss actually falls.
    ys = torch.randint(0, 10, (steps, batch), generator=g)
    xs = torch.randn(steps, batch, 1, 22, 22, generator=g) * 0.5
    for s in range(steps):
        for i in range(batch):
            c = int(ys[s, i])
            xs[s, i, 0, 2 * c:2 * c + 4, 4:18] += 1.0
    return xs, ys


class Run:
    """One training run as a user script writes it: zeroing, scheduler, clipping and scaler as the
    configuration says; `step(x, y)` is one iteration."""

    def __init__(self, config, model, opt):
        self.config, self.model, self.opt = config, model, opt
        self.sched = torch.optim.lr_scheduler.StepLR(opt, 3, 0.5) if config.get("scheduler") else None
        self.scaler = torch.amp.GradScaler("cpu", init_scale=1024.0) if config.get("scaler") else None

    def zero(self, inner):
        how = self.config.get("zero", "opt")
        if how == "model":
            self.model.zero_grad()
        elif how == "inner":
            inner.zero_grad()
        elif how == "keep":
            self.opt.zero_grad(set_to_none=False)
        else:
            self.opt.zero_grad()

    def step(self, x, y, inner=None):
        self.zero(inner or self.opt)
        loss = F.cross_entropy(self.model(x), y)
        (self.scaler.scale(loss) if self.scaler else loss).backward()
        if self.scaler:
            self.scaler.unscale_(self.opt)
        if self.config.get("clip"):
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config["clip"])
        if self.scaler:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        if self.sched:
            self.sched.step()
        return loss.item()


def reference(config, xs, ys):
    torch.manual_seed(100)
    model = Net()
    opt = make_optimizer(config.get("optimizer", "sgd"), model.parameters())
    run = Run(config, model, opt)
    for x, y in zip(xs, ys):
        run.step(x, y)
    return [p.detach().clone() for p in model.parameters()]


def wrap(config, model, per_rank):
    inner = make_optimizer(config.get("optimizer", "sgd"), model.parameters())
    opt = pt.DistributedOptimizer(
        inner, model, sync=config["sync"], comm=config.get("comm", "allreduce"),
        bucket_mb=config.get("bucket_mb", 25), slice_elements=config.get("slice", 50000),
        shard_updates=config.get("shard", False), batch_per_rank=per_rank,
        overlap_update=config.get("overlap", False), mirror_parameters=config.get("mirror", False))
    assert isinstance(opt, type(inner)), type(opt).__mro__
    return inner, opt


def distributed(config, xs, ys, ckpt_dir):
    torch.manual_seed(100 + parasol.rank())  # unequal starts: the optimizer broadcasts rank 0's
    model = Net()
    device = config.get("device", "cpu")
    if device == "cuda":
        device = f"cuda:{parasol.local_rank() % torch.cuda.device_count()}"
        model.to(device)
        xs, ys = xs.to(device), ys.to(device)
    if config.get("compile"):
        model = torch.compile(model, backend=config["compile"])
    per_rank = xs.shape[1] // parasol.size()
    lo = parasol.rank() * per_rank
    inner, opt = wrap(config, model, per_rank)
    run = Run(config, model, opt)
    losses = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if config.get("resume") and i == len(xs) // 2:
            path = os.path.join(ckpt_dir, "model.pt")
            pt.save_checkpoint(path, model, opt, step=i)
            opt.close()
            torch.manual_seed(200 + parasol.rank())
            model = Net().to(device)
            inner, opt = wrap(config, model, per_rank)
            assert pt.load_checkpoint(path, model, opt) == {"step": i}
            run = Run(config, model, opt)
        losses.append(run.step(x[lo:lo + per_rank], y[lo:lo + per_rank], inner))
    opt.synchronize()
    sfb = sum(1 for c in opt.layer_choices() if c["sfb"])
    units = opt.num_units
    mirrored = opt._sync().mirrored
    opt.close()
    return [p.detach().cpu() for p in model.parameters()], losses, sfb, units, mirrored


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8, help="even")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--ckpt-dir", default=".", help="a folder every rank reads (resume)")
    parser.add_argument("configs", help="JSON list of configurations")
    args = parser.parse_args()
    parasol.init(timeout_ms=30000)
    xs, ys = data(args.steps, args.batch)
    for config in json.loads(args.configs):
        want = reference(config, xs, ys)
        got, losses, sfb, units, mirrored = distributed(config, xs, ys, args.ckpt_dir)
        diff = max(float((a - b).abs().max()) for a, b in zip(got, want))
        scale = max(float(b.abs().max()) for b in want)
        # Every rank holds the same replica: the largest difference from rank 0's.
        spread = max(float((pt.allreduce(p, op="max") - pt.allreduce(p, op="min")).max()) for p in got)
        mirrored = mirrored == (config.get("mirror", False) or config.get("device") == "cuda")
        if parasol.rank() == 0:
            print(json.dumps({"config": config, "max_diff": diff, "scale": scale, "spread": spread,
                              "first_loss": losses[0], "last_loss": losses[-2], "sfb_layers": sfb,
                              "units": units, "mirrored_as_expected": mirrored}), flush=True)
    parasol.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
