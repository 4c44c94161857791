"""The Transformer language model of `parasol train --model transformer-lm`, written in PyTorch the
way a user would: pre-norm blocks of causal self-attention and a feed-forward layer or a mixture
of experts (top-k routing with capacity, first choices before second ones, dropped tokens through
the residual, Switch's balance loss and the router z-loss), experts spread over the ranks and
tokens moved by all-to-all (gloo), the dense gradients averaged by one all-reduce after backward,
AdamW. Character-level tokens as parasol reads them (the first 90% of the lines train, the
vocabulary sorted). For timing beside parasol: the same model, batch and threads per rank.

Usage: moe_torch.py TEXT [--ranks 2] [--layers 4] [--d-model 128] [--heads 4] [--ffn 256] [--seq 128]
                         [--batch 16] [--steps 50] [--experts 8] [--top-k 2] [--capacity-factor 1.25]
                         [--lr 1e-3] [--threads 1] [--port 29517]
Prints one line (rank 0): torch: steps S median_tokens_per_sec T loss L
"""
import argparse
import math
import os
import statistics
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F


class AllToAll(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = torch.empty_like(x)
        dist.all_to_all_single(out, x.contiguous())
        return out

    @staticmethod
    def backward(ctx, g):
        out = torch.empty_like(g)
        dist.all_to_all_single(out, g.contiguous())
        return out


class Moe(nn.Module):
    def __init__(self, d, ff, experts, top_k, capacity_factor, world, rank, out_std):
        super().__init__()
        self.e, self.k, self.cf, self.world = experts, top_k, capacity_factor, world
        self.local = experts // world
        first = self.local * rank
        self.router = nn.Parameter(torch.randn(experts, d) * 0.02)
        self.w1 = nn.Parameter((torch.randn(experts, d, ff) * 0.02)[first:first + self.local].clone())
        self.b1 = nn.Parameter(torch.zeros(self.local, ff))
        self.w2 = nn.Parameter((torch.randn(experts, ff, d) * out_std)[first:first + self.local].clone())
        self.b2 = nn.Parameter(torch.zeros(self.local, d))
        self.aux = None

    def forward(self, x):
        n, d = x.shape
        logits = x @ self.router.t()
        probs = logits.softmax(1)
        top, choice = probs.topk(self.k, 1)
        gates = top if self.k == 1 else top / top.sum(1, keepdim=True)
        cap = max(1, math.ceil(self.k * n * self.cf / self.e))
        taken = torch.zeros(self.e, dtype=torch.long)
        slots = []
        for j in range(self.k):
            hot = F.one_hot(choice[:, j], self.e)
            place = (hot.cumsum(0) - 1 + taken).gather(1, choice[:, j:j + 1]).squeeze(1)
            taken = taken + hot.sum(0)
            slots.append(torch.where(place < cap, choice[:, j] * cap + place, torch.full_like(place, -1)))
        slots = torch.stack(slots, 1).reshape(-1)
        tokens = torch.arange(n).repeat_interleave(self.k)
        kept = (slots >= 0).nonzero().squeeze(1)
        ks, kt = slots[kept], tokens[kept]
        buf = torch.zeros(self.e * cap, d).index_add(0, ks, x[kt]).view(self.e, cap, d)
        if self.world > 1:
            buf = AllToAll.apply(buf).view(self.world, self.local, cap, d).transpose(0, 1).reshape(
                self.local, self.world * cap, d)
        h = F.gelu(torch.baddbmm(self.b1.unsqueeze(1), buf, self.w1))
        out = torch.baddbmm(self.b2.unsqueeze(1), h, self.w2)
        if self.world > 1:
            out = out.view(self.local, self.world, cap, d).transpose(0, 1).contiguous()
            out = AllToAll.apply(out)
        out = out.reshape(self.e * cap, d)
        weighted = out[ks] * gates.reshape(-1)[kept].unsqueeze(1)
        share = F.one_hot(choice, self.e).float().sum(1).mean(0) / self.k
        self.aux = (self.e * (share * probs.mean(0)).sum(), torch.logsumexp(logits, 1).pow(2).mean())
        return torch.zeros(n, d).index_add(0, kt, weighted)


class Block(nn.Module):
    def __init__(self, a, world, rank, moe):
        super().__init__()
        d, self.h = a.d_model, a.heads
        out_std = 0.02 / math.sqrt(2 * a.layers)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        for lin, std in ((self.qkv, 0.02), (self.proj, out_std)):
            nn.init.normal_(lin.weight, 0, std)
            nn.init.zeros_(lin.bias)
        if moe:
            self.moe = Moe(d, a.ffn, a.experts, a.top_k, a.capacity_factor, world, rank, out_std)
        else:
            self.moe = None
            self.fc1, self.fc2 = nn.Linear(d, a.ffn), nn.Linear(a.ffn, d)
            for lin, std in ((self.fc1, 0.02), (self.fc2, out_std)):
                nn.init.normal_(lin.weight, 0, std)
                nn.init.zeros_(lin.bias)
        mask = torch.ones(a.seq, a.seq, dtype=torch.bool).triu(1)
        self.register_buffer("future", mask)

    def forward(self, x):
        b, l, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, l, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        s = (q @ k.transpose(-2, -1)) / math.sqrt(d // self.h)
        s = s.masked_fill(self.future[:l, :l], float("-inf"))
        x = x + self.proj((s.softmax(-1) @ v).transpose(1, 2).reshape(b, l, d))
        z = self.ln2(x)
        if self.moe is not None:
            return x + self.moe(z.reshape(-1, d)).view(b, l, d)
        return x + self.fc2(F.gelu(self.fc1(z)))


class Lm(nn.Module):
    def __init__(self, a, vocab, world, rank):
        super().__init__()
        self.tokens = nn.Parameter(torch.randn(vocab, a.d_model) * 0.02)
        self.positions = nn.Parameter(torch.randn(a.seq, a.d_model) * 0.02)
        self.blocks = nn.ModuleList(
            Block(a, world, rank, a.experts > 0 and (i + 1) % a.moe_every == 0) for i in range(a.layers))
        self.ln = nn.LayerNorm(a.d_model)

    def forward(self, x):
        h = self.tokens[x] + self.positions[:x.shape[1]]
        for b in self.blocks:
            h = b(h)
        return self.ln(h) @ self.tokens.t()


def read_tokens(path):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    cut = int(len(lines) * 0.9)
    text = b"".join(l + b"\n" for l in lines[:cut])
    vocab = sorted(set(text))
    ids = {c: i for i, c in enumerate(vocab)}
    return torch.tensor([ids[c] for c in text], dtype=torch.long), len(vocab)


def worker(rank, a):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(a.port)
    dist.init_process_group("gloo", rank=rank, world_size=a.ranks)
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    train, vocab = read_tokens(a.text)
    model = Lm(a, vocab, a.ranks, rank)
    experts = {id(p) for n, p in model.named_parameters() if ".moe.w" in n or ".moe.b" in n}
    dense = [p for p in model.parameters() if id(p) not in experts]
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0)
    gen = torch.Generator().manual_seed(a.seed * 1000 + rank)
    speeds, loss = [], float("nan")
    for step in range(a.steps):
        starts = torch.randint(0, len(train) - a.seq - 1, (a.batch,), generator=gen)
        x = torch.stack([train[s:s + a.seq] for s in starts])
        y = torch.stack([train[s + 1:s + a.seq + 1] for s in starts])
        t0 = time.perf_counter()
        out = model(x)
        lm = F.cross_entropy(out.reshape(-1, vocab), y.reshape(-1))
        total = lm
        for b in model.blocks:
            if b.moe is not None:
                total = total + a.aux_loss_coef * b.moe.aux[0] + a.z_loss_coef * b.moe.aux[1]
        opt.zero_grad()
        total.backward()
        if a.ranks > 1:
            flat = torch.cat([p.grad.reshape(-1) for p in dense])
            dist.all_reduce(flat)
            flat /= a.ranks
            at = 0
            for p in dense:
                p.grad.copy_(flat[at:at + p.numel()].view_as(p))
                at += p.numel()
            for p in model.parameters():  # experts: each rank's own (expert parallel over all ranks)
                if id(p) in experts:
                    p.grad /= a.ranks
        opt.step()
        seconds = time.perf_counter() - t0
        if step > 0:
            speeds.append(a.batch * a.seq * a.ranks / seconds)
        loss = lm.item()
    if rank == 0:
        print(f"torch: steps {a.steps} median_tokens_per_sec {statistics.median(speeds):.1f} loss {loss:.4f}",
              flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("text")
    for name, kind, default in (("ranks", int, 2), ("layers", int, 4), ("d-model", int, 128), ("heads", int, 4),
                                ("ffn", int, 256), ("seq", int, 128), ("batch", int, 16), ("steps", int, 50),
                                ("experts", int, 8), ("top-k", int, 2), ("moe-every", int, 1),
                                ("capacity-factor", float, 1.25), ("aux-loss-coef", float, 0.02),
                                ("z-loss-coef", float, 0.001), ("lr", float, 1e-3), ("threads", int, 1),
                                ("seed", int, 1), ("port", int, 29517)):
        p.add_argument("--" + name, type=kind, default=default)
    a = p.parse_args()
    mp.spawn(worker, args=(a,), nprocs=a.ranks, join=True)


if __name__ == "__main__":
    main()
