#!/usr/bin/python3
"""PyTorch DistributedDataParallel (gloo) on the models `parasol train` has, for side-by-side runs.

Usage: ddp_bench.py MODEL RANKS BATCH STEPS [--no-comm]
Prints: ddp MODEL RANKS median_step_ms samples_per_sec
--no-comm trains the ranks side by side without DDP (the compute-only step on the same cores).
"""
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    """CIFAR ResNet basic block with the zero-padded identity shortcut (option A)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.stride, self.pad = stride, cout - cin

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        s = x
        if self.stride != 1 or self.pad:
            s = F.pad(x[:, :, ::self.stride, ::self.stride], (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))
        return F.relu(y + s)


def resnet20():
    layers = [nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU()]
    cin = 16
    for width in (16, 32, 64):
        for b in range(3):
            layers.append(Block(cin, width, 2 if b == 0 and width != 16 else 1))
            cin = width
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
    return nn.Sequential(*layers)


def vgg():
    def conv(cin, cout, pool):
        return [nn.Conv2d(cin, cout, 3, 1, 1), nn.ReLU()] + ([nn.MaxPool2d(2)] if pool else [])
    return nn.Sequential(*conv(3, 64, True), *conv(64, 128, True), *conv(128, 256, False), *conv(256, 256, True),
                         *conv(256, 512, True), nn.Flatten(), nn.Linear(2048, 4096), nn.ReLU(),
                         nn.Linear(4096, 4096), nn.ReLU(), nn.Linear(4096, 10))


MODELS = {
    "mlp": (lambda: nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(),
                                  nn.Linear(1024, 10)), (1, 28, 28)),
    "resnet20": (resnet20, (3, 32, 32)),
    "vgg": (vgg, (3, 32, 32)),
}


def run(rank, model_name, ranks, batch, steps, comm, port, out):
    torch.set_num_threads(1)
    torch.manual_seed(1)
    make, shape = MODELS[model_name]
    model = make()
    if comm:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=ranks)
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator().manual_seed(rank)
    x = torch.randn((batch,) + shape, generator=gen)
    y = torch.randint(10, (batch,), generator=gen)
    times = []
    for step in range(steps + 2):
        t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if step >= 2:
            times.append(time.perf_counter() - t0)
    if rank == 0:
        out.put(statistics.median(times))
    if comm:
        dist.destroy_process_group()


def main():
    model, ranks, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    comm = "--no-comm" not in sys.argv
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    port = 29500 + os.getpid() % 1000
    procs = [ctx.Process(target=run, args=(r, model, ranks, batch, steps, comm, port, out)) for r in range(ranks)]
    for p in procs:
        p.start()
    step = out.get()
    for p in procs:
        p.join()
    print(f"ddp{'' if comm else '-nocomm'} {model} {ranks} {1e3 * step:.2f} {batch * ranks / step:.1f}")


if __name__ == "__main__":
    main()
