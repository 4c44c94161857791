"""A linear regression by SGD whose weights live on parasol's parameter server, under stale
synchronous parallel: each rank reads the weights at most STALENESS clocks old, computes the
gradient on its share of the data and adds its step; nothing but parasol.ps is shared.

    scripts/mpirun.sh -np 2 .venv/bin/python examples/ps_linear_regression.py --staleness 2
"""
import argparse

import torch

import parasol
import parasol.ps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--samples", type=int, default=4000, help="per rank")
    ap.add_argument("--clocks", type=int, default=200)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--staleness", type=int, default=2)
    args = ap.parse_args()

    parasol.init()
    truth = torch.randn(args.features, generator=torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(1 + parasol.rank())
    x = torch.randn(args.samples, args.features, generator=g)
    y = x @ truth + 0.1 * torch.randn(args.samples, generator=g)

    server = parasol.ps.ParameterServer()
    weights = server.table(1, width=args.features, rows=1, consistency=f"ssp:{args.staleness}")
    for clock in range(args.clocks):
        w = weights.get(0)
        i = torch.randint(0, args.samples, (args.batch,), generator=g)
        residual = x[i] @ w - y[i]
        gradient = x[i].t() @ residual / args.batch
        weights.inc(0, -args.lr / parasol.size() * gradient)
        server.clock()
        if parasol.rank() == 0 and clock % 50 == 0:
            print(f"clock {clock}: batch mse {float((residual ** 2).mean()):.4f}", flush=True)
    server.barrier()
    w = weights.get(0)
    if parasol.rank() == 0:
        print(f"distance to the true weights {float((w - truth).norm()):.4f}; "
              f"waited {server.wait_seconds:.2f} s for fresh rows", flush=True)
    server.close()
    parasol.shutdown()


if __name__ == "__main__":
    main()
