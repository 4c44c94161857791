"""An ordinary DistributedDataParallel script, with parasol as its torch.distributed backend: the
one change is the backend's name (and `import parasol.torch`, which registers it).

    pip install .                                   # into the environment that has torch
    mpirun -np 2 python examples/ddp_train.py --backend parasol
    mpirun -np 2 python examples/ddp_train.py --backend gloo     # the same script on gloo

Under mpirun, `import parasol.torch` gives torch's env:// rendezvous what torchrun would (RANK,
WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT), so init_process_group needs no arguments.
"""
import argparse
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

import parasol.torch  # noqa: F401  (registers the "parasol" backend)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="parasol")
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--batch", type=int, default=64, help="per rank")
    args = ap.parse_args()
    dist.init_process_group(args.backend)
    rank, size = dist.get_rank(), dist.get_world_size()
    device = torch.device(f"cuda:{int(os.environ['LOCAL_RANK'])}" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(
        nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 10)).to(device))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=20, gamma=0.5)
    teacher = torch.nn.Linear(32, 10).to(device)  # the same on every rank (seed 0): a learnable task
    g = torch.Generator().manual_seed(rank)
    for step in range(args.steps):
        x = torch.randn(args.batch, 32, generator=g).to(device)
        y = teacher(x).argmax(1).detach()
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        sched.step()
        if rank == 0 and step % 10 == 9:
            print(f"step {step + 1}: loss {loss.item():.4f} ({size} ranks, {args.backend})", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
