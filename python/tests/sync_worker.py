"""Run under mpirun by test_torch.py: trains a small CNN with parasol.torch.DistributedOptimizer,
each rank on its slice of every global batch, for each configuration given, and compares the
parameters with plain PyTorch training the same model on the whole batch in one process. Prints
one JSON line per configuration on rank 0: {"config": ..., "max_diff": ..., "scale": ...}."""
import argparse
import json
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


def reference(config, xs, ys):
    torch.manual_seed(100)
    model = Net()
    opt = make_optimizer(config.get("optimizer", "sgd"), model.parameters())
    for x, y in zip(xs, ys):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return [p.detach().clone() for p in model.parameters()]


def distributed(config, xs, ys):
    torch.manual_seed(100 + parasol.rank())  # unequal starts: the optimizer broadcasts rank 0's
    model = Net()
    per_rank = xs.shape[1] // parasol.size()
    lo = parasol.rank() * per_rank
    opt = pt.DistributedOptimizer(
        make_optimizer(config.get("optimizer", "sgd"), model.parameters()), model,
        sync=config["sync"], comm=config.get("comm", "allreduce"), bucket_mb=config.get("bucket_mb", 25),
        slice_elements=config.get("slice", 50000), shard_updates=config.get("shard", False),
        batch_per_rank=per_rank)
    losses = []
    for x, y in zip(xs, ys):
        opt.zero_grad()
        loss = F.cross_entropy(model(x[lo:lo + per_rank]), y[lo:lo + per_rank])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    opt.synchronize()
    sfb = sum(1 for c in opt.layer_choices() if c["sfb"])
    units = opt.num_units
    opt.close()
    return [p.detach().clone() for p in model.parameters()], losses, sfb, units


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8, help="even")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("configs", help="JSON list of configurations")
    args = parser.parse_args()
    parasol.init(timeout_ms=30000)
    xs, ys = data(args.steps, args.batch)
    for config in json.loads(args.configs):
        want = reference(config, xs, ys)
        got, losses, sfb, units = distributed(config, xs, ys)
        diff = max(float((a - b).abs().max()) for a, b in zip(got, want))
        scale = max(float(b.abs().max()) for b in want)
        # Every rank holds the same replica: the largest difference from rank 0's.
        spread = max(float((pt.allreduce(p, op="max") - pt.allreduce(p, op="min")).max()) for p in got)
        if parasol.rank() == 0:
            print(json.dumps({"config": config, "max_diff": diff, "scale": scale, "spread": spread,
                              "first_loss": losses[0], "last_loss": losses[-2], "sfb_layers": sfb,
                              "units": units}), flush=True)
    parasol.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
