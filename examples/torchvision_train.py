"""A torchvision model (ResNet-18 or VGG-11) trained data-parallel with parasol.torch, on
synthetic CIFAR-sized images (a class-dependent pattern plus noise, so the loss falls).

    scripts/mpirun.sh -np 2 .venv/bin/python examples/torchvision_train.py \
        --model resnet18 --steps 30 --sync wfbp
    ... --model vgg11 --sync p3 --comm hybrid       # SFB for VGG's 4096-wide layers

The batch is the global one, split over the ranks. The five lines parasol adds to a PyTorch
script are marked "parasol".
"""
import argparse
import time

import torch
import torch.nn.functional as F
import torchvision

import parasol.torch as pt


def synthetic_batch(step, rank, batch, classes, size):
    g = torch.Generator().manual_seed(1000 * step + rank)
    y = torch.randint(0, classes, (batch,), generator=g)
    x = torch.randn(batch, 3, size, size, generator=g) * 0.5
    rows = size // classes
    for i in range(batch):
        c = int(y[i])
        x[i, c % 3, c * rows:(c + 1) * rows, :] += 1.5
    return x, y


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", choices=["resnet18", "vgg11"], default="resnet18")
    ap.add_argument("--batch", type=int, default=64, help="global batch")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--lr", type=float, default=0.02)
    ap.add_argument("--image-size", type=int, default=32)
    ap.add_argument("--sync", default="wfbp", choices=pt.SYNC_MODES)
    ap.add_argument("--comm", default="allreduce", choices=pt.COMMS)
    ap.add_argument("--threads", type=int, default=0, help="torch threads per rank (0: cores / ranks)")
    ap.add_argument("--checkpoint", help="write the model and optimizer here at the end")
    args = ap.parse_args()

    pt.init()                                                     # parasol
    threads = args.threads or max(1, torch.get_num_threads() // pt.local_size())
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    model = getattr(torchvision.models, args.model)(num_classes=10)
    per_rank = args.batch // pt.size()
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=5e-4)
    opt = pt.DistributedOptimizer(opt, model, sync=args.sync, comm=args.comm,  # parasol
                                  batch_per_rank=per_rank)
    start = None
    for step in range(args.steps):
        if step == 2:
            start = time.perf_counter()                           # the first steps warm up
        x, y = synthetic_batch(step, pt.rank(), per_rank, 10, args.image_size)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if pt.rank() == 0 and (step % 10 == 0 or step == args.steps - 1):
            print(f"step {step}: loss {loss.item():.4f}", flush=True)
    opt.synchronize()
    if pt.rank() == 0 and args.steps > 3:
        seconds = time.perf_counter() - start
        stats = opt.stats()
        print(f"{args.model} {pt.size()} ranks x {threads} threads, {args.sync} over {args.comm}: "
              f"{(args.steps - 2) * args.batch / seconds:.1f} samples/s, "
              f"waiting on synchronisation {stats['wait_seconds']:.2f} s in all")
    if args.checkpoint:
        pt.save_checkpoint(args.checkpoint, model, opt, step=args.steps)  # parasol (collective)
    pt.shutdown()


if __name__ == "__main__":
    main()
