"""One benchmark script for parasol.torch and PyTorch DDP: the same torchvision model, batch per
rank, threads per rank and synthetic data; only the wrapper differs. Run it under mpirun (ranks
from OpenMPI's environment) with the project's Python (.venv).

    mpirun -np 2 .venv/bin/python bench/torch_plugin.py --engine parasol --model vgg11 --sync p3 --comm hybrid
    mpirun -np 2 .venv/bin/python bench/torch_plugin.py --engine ddp --model vgg11

engines: parasol (DistributedOptimizer; --overlap: overlap_update=True), ddp
(DistributedDataParallel over gloo), ddp-parasol (the same DDP over the "parasol" backend),
plain (no wrapper: one rank's PyTorch, or the ranks side by side computing alone).
Prints on rank 0 one JSON line: median step ms, its spread, samples/s over all ranks, the time
the training thread waited on synchronisation per step (parasol).
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.nn.functional as F
import torchvision

from ddp_bench import MODELS as PARASOL_MODELS  # parasol train's architectures, in PyTorch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", choices=["parasol", "ddp", "ddp-parasol", "plain"], required=True)
    ap.add_argument("--model", default="resnet18",
                    help="a torchvision model (resnet18, vgg11, ...) or parasol train's mlp, resnet20, vgg")
    ap.add_argument("--batch", type=int, default=32, help="per rank")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--sync", default="wfbp")
    ap.add_argument("--comm", default="allreduce")
    ap.add_argument("--bucket-mb", type=float, default=25)
    ap.add_argument("--overlap", action="store_true", help="parasol: overlap_update=True")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", 0))
    ranks = int(os.environ.get("OMPI_COMM_WORLD_SIZE", 1))
    torch.manual_seed(1)
    if args.model in PARASOL_MODELS:
        make, shape = PARASOL_MODELS[args.model]
        model = make()
    else:
        model = getattr(torchvision.models, args.model)(num_classes=10)
        shape = (3, args.image_size, args.image_size)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    wait = None
    if args.engine == "parasol":
        import parasol.torch as pt
        pt.init()
        opt = pt.DistributedOptimizer(opt, model, sync=args.sync, comm=args.comm, bucket_mb=args.bucket_mb,
                                      batch_per_rank=args.batch, overlap_update=args.overlap)
    elif args.engine in ("ddp", "ddp-parasol"):
        import torch.distributed as dist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        # On network-namespace "hosts" gloo must use this host's link (its name differs per host).
        prefix = os.environ.get("GLOO_IFNAME_PREFIX")
        if prefix:
            os.environ["GLOO_SOCKET_IFNAME"] = next(n for n in sorted(os.listdir("/sys/class/net"))
                                                    if n.startswith(prefix))
        if args.engine == "ddp-parasol":
            import parasol.torch  # noqa: F401  (registers the backend)
            dist.init_process_group("parasol", rank=rank, world_size=ranks)
        else:
            dist.init_process_group("gloo", rank=rank, world_size=ranks)
        model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=args.bucket_mb)
    g = torch.Generator().manual_seed(rank)
    x = torch.randn((args.batch,) + tuple(shape), generator=g)
    y = torch.randint(0, 10, (args.batch,), generator=g)
    times = []
    for step in range(args.steps + 2):
        if step == 2 and args.engine == "parasol":
            wait = opt.stats()["wait_seconds"]
        t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        if step >= 2:
            times.append(time.perf_counter() - t0)
    if args.engine == "parasol":
        opt.synchronize()
        wait = (opt.stats()["wait_seconds"] - wait) / args.steps
        pt.shutdown()
    elif args.engine in ("ddp", "ddp-parasol"):
        dist.destroy_process_group()
    if rank == 0:
        step = statistics.median(times)
        name = args.engine if args.engine != "parasol" else \
            f"parasol {args.sync}:{args.comm}" + (" overlap" if args.overlap else "")
        print(json.dumps({"engine": name, "model": args.model, "ranks": ranks, "threads": args.threads,
                          "batch": args.batch, "step_ms": 1e3 * step,
                          "spread_ms": 1e3 * (max(times) - min(times)),
                          "samples_per_sec": args.batch * ranks / step,
                          "wait_ms": None if wait is None else 1e3 * wait}), flush=True)


if __name__ == "__main__":
    main()
