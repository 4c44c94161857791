"""The binary Tree-LSTM of `parasol train --model tree-lstm` (Tai et al.'s constituency cell: leaves
read their word into i, o, u; inner nodes their two children, with a forget gate per child; every
node classified into 5 sentiment classes) written in PyTorch two ways:

  recursive  the way a user writes it: a function that recurses down each tree, one node at a time
  levels     batched by level across the trees of a batch (DGL's approach in plain PyTorch): the
             nodes of one height of every tree computed together, their states written into a node
             table (index_copy) that the next level gathers its children from

The same sizes, initialisation scheme and loss (cross-entropy summed over every node, divided by
the batch's nodes), Adam. For timing beside parasol: sentences per second after the first step.

Usage: treelstm_torch.py SST_DIR [--mode recursive|levels] [--batch 64] [--hidden 150] [--embedding 300]
                                 [--steps 20] [--threads 1] [--seed 1]
Prints one line: torch-MODE: batch B hidden H median_sentences_per_sec S loss L
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def parse(line):
    """A PTB tree as (label, word) leaves and (label, left, right) inner nodes."""
    tokens = line.replace("(", " ( ").replace(")", " ) ").split()
    pos = 0

    def node():
        nonlocal pos
        pos += 1  # "("
        label = int(tokens[pos])
        pos += 1
        if tokens[pos] != "(":
            word = tokens[pos]
            pos += 2  # word, ")"
            return (label, word)
        children = []
        while tokens[pos] == "(":
            children.append(node())
        pos += 1  # ")"
        return (label, *children) if len(children) == 2 else children[0]

    return node()


class Cell(nn.Module):
    def __init__(self, e, h):
        super().__init__()
        k = 1 / math.sqrt(h)
        self.h = h
        self.w = nn.Parameter(torch.empty(3 * h, e).uniform_(-k, k))  # leaves: i, o, u
        self.u = nn.Parameter(torch.empty(5 * h, 2 * h).uniform_(-k, k))
        self.b = nn.Parameter(torch.empty(5 * h).uniform_(-k, k))

    def leaf(self, x):
        bi, _, _, bo, bu = self.b.chunk(5)
        i, o, u = (x @ self.w.t() + torch.cat([bi, bo, bu])).chunk(3, -1)
        c = torch.sigmoid(i) * torch.tanh(u)
        return torch.sigmoid(o) * torch.tanh(c), c

    def inner(self, hl, cl, hr, cr):
        g = torch.cat([hl, hr], -1) @ self.u.t() + self.b
        i, fl, fr, o, u = g.chunk(5, -1)
        c = torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(fl) * cl + torch.sigmoid(fr) * cr
        return torch.sigmoid(o) * torch.tanh(c), c


class Model(nn.Module):
    def __init__(self, vocab, e, h):
        super().__init__()
        self.embed = nn.Embedding(vocab, e)
        nn.init.uniform_(self.embed.weight, -0.05, 0.05)
        self.cell = Cell(e, h)
        self.out = nn.Linear(h, 5)
        self.drop = nn.Dropout(0.5)  # before the output layer, as parasol's

    def recursive(self, tree, ids, hs, labels):
        if len(tree) == 2:
            h, c = self.cell.leaf(self.embed(torch.tensor([ids[tree[1]]]))[0])
        else:
            hl, cl = self.recursive(tree[1], ids, hs, labels)
            hr, cr = self.recursive(tree[2], ids, hs, labels)
            h, c = self.cell.inner(hl, cl, hr, cr)
        hs.append(h)
        labels.append(tree[0])
        return h, c

    def levels(self, trees, ids):
        """Nodes numbered across the batch; each level's nodes computed at once."""
        words, children, labels, height = [], [], [], []

        def walk(t):
            if len(t) == 2:
                n = len(labels)
                labels.append(t[0]), children.append((-1, -1)), height.append(0), words.append(ids[t[1]])
                return n
            a, b = walk(t[1]), walk(t[2])
            n = len(labels)
            labels.append(t[0]), children.append((a, b)), height.append(max(height[a], height[b]) + 1)
            words.append(-1)
            return n

        for t in trees:
            walk(t)
        n, h = len(labels), self.cell.h
        hs, cs = torch.zeros(n, h), torch.zeros(n, h)
        by_height = {}
        for v, d in enumerate(height):
            by_height.setdefault(d, []).append(v)
        for d in sorted(by_height):
            nodes = torch.tensor(by_height[d])
            if d == 0:
                hn, cn = self.cell.leaf(self.embed(torch.tensor([words[v] for v in by_height[d]])))
            else:
                left = torch.tensor([children[v][0] for v in by_height[d]])
                right = torch.tensor([children[v][1] for v in by_height[d]])
                hn, cn = self.cell.inner(hs[left], cs[left], hs[right], cs[right])
            hs, cs = hs.index_copy(0, nodes, hn), cs.index_copy(0, nodes, cn)
        return self.out(self.drop(hs)), torch.tensor(labels)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sst")
    p.add_argument("--mode", choices=("recursive", "levels"), default="levels")
    for name, default in (("batch", 64), ("hidden", 150), ("embedding", 300), ("steps", 20), ("threads", 1),
                          ("seed", 1)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    with open(f"{a.sst}/train.txt") as f:
        trees = [parse(line) for line in f if line.strip()]
    vocab = {}

    def collect(t):
        if len(t) == 2:
            vocab.setdefault(t[1], len(vocab))
        else:
            collect(t[1]), collect(t[2])

    for t in trees:
        collect(t)
    model = Model(len(vocab), a.embedding, a.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    speeds, loss = [], float("nan")
    for step in range(a.steps):
        batch = [trees[(step * a.batch + i) % len(trees)] for i in range(a.batch)]
        t0 = time.perf_counter()
        if a.mode == "recursive":
            hs, labels = [], []
            for t in batch:
                model.recursive(t, vocab, hs, labels)
            logits, labels = model.out(model.drop(torch.stack(hs))), torch.tensor(labels)
        else:
            logits, labels = model.levels(batch, vocab)
        total = F.cross_entropy(logits, labels)
        opt.zero_grad()
        total.backward()
        opt.step()
        seconds = time.perf_counter() - t0
        if step > 0:
            speeds.append(a.batch / seconds)
        loss = total.item()
    print(f"torch-{a.mode}: batch {a.batch} hidden {a.hidden} median_sentences_per_sec {statistics.median(speeds):.1f} "
          f"loss {loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
