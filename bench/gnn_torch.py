"""The GCN of Kipf and Welling in PyTorch, as its reference implementations write it: sparse
adjacency products with torch.sparse.mm, Adam with weight decay on the first layer, dropout on
the (sparse) input and the hidden layer. --model gat: a one-head-per-layer GAT (Velickovic et
al.) written with index_add_ and scatter_reduce_ over the edge list (as PyTorch Geometric's
GATConv does), ELU between layers, dropout on the attention too. The same models, data and
hyper-parameters as `parasol gnn`, so the two can be timed side by side.

Usage: gnn_torch.py GRAPH_DIR [--model gcn|gat] [--epochs 200] [--seed 1] [--hidden 16]
                             [--dropout 0.5] [--lr 0.01] [--weight-decay 5e-4] [--threads 1]
Prints one line: torch: epochs E median_epoch_ms T val_accuracy V test_accuracy A peak_rss_mb M
"""
import argparse
import glob
import os
import resource
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_graph(folder):
    content = glob.glob(os.path.join(folder, "*.content"))
    assert len(content) == 1, f"{folder}: want one .content file"
    stem = content[0][: -len(".content")]
    labels, splits, rows, cols, vals = [], [], [], [], []
    ids = []
    with open(content[0]) as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#"):
                continue
            v = len(ids)
            ids.append(int(fields[0]))
            labels.append(int(fields[1]))
            splits.append(fields[2])
            for kv in fields[3:]:
                k, x = kv.split(":")
                rows.append(v)
                cols.append(int(k))
                vals.append(float(x))
    order = np.argsort(np.array(ids))  # line index of vertex 0, 1, ...
    where = np.empty_like(order)
    where[order] = np.arange(len(order))
    rows = where[np.array(rows, dtype=np.int64)]
    used, cols = np.unique(np.array(cols, dtype=np.int64), return_inverse=True)  # dense feature ids
    labels = np.array(labels)[order]
    splits = np.array(splits)[order]
    if os.path.exists(stem + ".cites"):
        edges = np.loadtxt(stem + ".cites", dtype=np.int64, ndmin=2)
    else:
        # parasol's section file (src/parasol/core/section_file.h) of kind graph-edges: a 32-byte
        # header, then the one section's 32-byte header (name, element size, count) and its pairs.
        raw = np.fromfile(stem + ".edges", dtype=np.uint8)
        assert raw[:8].tobytes() == b"PARASOLS" and raw[8:24].tobytes().rstrip(b"\0") == b"graph-edges"
        count = int(raw[56:64].view(np.uint64)[0])
        edges = raw[64 : 64 + 8 * count].view(np.uint32).reshape(count, 2).astype(np.int64)
    n = len(labels)
    features = (torch.tensor(np.stack([rows, cols])), torch.tensor(vals, dtype=torch.float32), (n, len(used)))
    return n, features, edges, labels, splits


def normalized_adjacency(n, edges):
    """D^-1/2 (A + I) D^-1/2, A symmetric without repeats or self-loops."""
    e = edges[edges[:, 0] != edges[:, 1]]
    both = np.concatenate([e, e[:, ::-1]])
    both = np.unique(both, axis=0)
    loops = np.arange(n)
    r = np.concatenate([both[:, 0], loops])
    c = np.concatenate([both[:, 1], loops])
    deg = np.bincount(r, minlength=n).astype(np.float64)
    inv = 1 / np.sqrt(deg)
    v = (inv[r] * inv[c]).astype(np.float32)
    return torch.sparse_coo_tensor(torch.tensor(np.stack([r, c])), torch.tensor(v), (n, n)).coalesce()


def gat_layer(h, w, a_src, a_dst, b, rows, cols, n, dropout, train, sparse_input):
    """One head: e_ij = LeakyReLU(a_dst . t_i + a_src . t_j) over the edges (i = rows, j = cols,
    self-loops included), softmax over each i's edges, then the weighted sum of t_j."""
    t = torch.sparse.mm(h, w) if sparse_input else h @ w
    e = F.leaky_relu((t @ a_dst)[rows] + (t @ a_src)[cols], 0.2)
    top = torch.full((n,), -float("inf")).scatter_reduce(0, rows, e, "amax", include_self=True)
    ex = torch.exp(e - top[rows])
    alpha = ex / torch.zeros(n).index_add(0, rows, ex)[rows]
    alpha = F.dropout(alpha, dropout, train)
    return torch.zeros(n, t.shape[1]).index_add(0, rows, alpha[:, None] * t[cols]) + b


def run_epochs(name, forward, opt, y, masks, epochs):
    """Trains `epochs` epochs (a step on the training vertices, then an evaluation of every vertex)
    and prints one line: NAME: epochs E median_epoch_ms T val_accuracy V test_accuracy A peak_rss_mb M
    (the median leaves out the first epoch)."""
    times = []
    for _ in range(epochs):
        start = time.perf_counter()
        opt.zero_grad()
        out = forward(True)
        loss = F.cross_entropy(out[masks["train"]], y[masks["train"]])
        loss.backward()
        opt.step()
        with torch.no_grad():
            out = forward(False)
        times.append(time.perf_counter() - start)
    pred = out.argmax(1)
    acc = {s: float((pred[m] == y[m]).float().mean()) for s, m in masks.items()}
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{name}: epochs {epochs} median_epoch_ms {1000 * statistics.median(times[1:] or times):.2f} "
          f"val_accuracy {acc['val']:.4f} test_accuracy {acc['test']:.4f} peak_rss_mb {rss_mb:.0f}")


def setup():
    """The command line (as `parasol gnn`'s), the threads and seed set; returns the arguments and
    the graph with its features as a sparse tensor whose rows sum to 1."""
    p = argparse.ArgumentParser()
    p.add_argument("graph")
    p.add_argument("--model", choices=("gcn", "gat"), default="gcn")
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--threads", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    n, (idx, vals, shape), edges, labels, splits = read_graph(a.graph)
    sums = np.bincount(idx[0].numpy(), weights=vals.numpy(), minlength=n)  # rows summing to 1
    vals = vals / torch.tensor(np.where(sums == 0, 1, sums)[idx[0].numpy()], dtype=torch.float32)
    x = torch.sparse_coo_tensor(idx, vals, shape).coalesce()
    return a, n, x, shape, edges, labels, splits


def main():
    a, n, x, shape, edges, labels, splits = setup()
    adj = normalized_adjacency(n, edges)
    y = torch.tensor(labels)
    masks = {s: torch.tensor(splits == s) for s in ("train", "val", "test")}
    classes = int(labels.max()) + 1

    w1 = torch.nn.Parameter(torch.empty(shape[1], a.hidden))
    w2 = torch.nn.Parameter(torch.empty(a.hidden, classes))
    torch.nn.init.xavier_uniform_(w1)
    torch.nn.init.xavier_uniform_(w2)
    b1 = torch.nn.Parameter(torch.zeros(a.hidden))
    b2 = torch.nn.Parameter(torch.zeros(classes))
    att = [torch.nn.Parameter(torch.empty(k)) for k in (a.hidden, a.hidden, classes, classes)]
    for v in att:
        torch.nn.init.xavier_uniform_(v.view(1, -1))
    rest = [b1, w2, b2] + (att if a.model == "gat" else [])
    opt = torch.optim.Adam([{"params": [w1], "weight_decay": a.weight_decay}, {"params": rest}], lr=a.lr)
    x_idx, x_val = x.indices(), x.values()
    rows, cols = adj.indices()

    def forward(train):
        if train and a.dropout > 0:  # dropout on the sparse input's nonzeros
            keep = (torch.rand(x_val.shape) >= a.dropout).float() / (1 - a.dropout)
            xi = torch.sparse_coo_tensor(x_idx, x_val * keep, shape)
        else:
            xi = x
        if a.model == "gat":
            h = gat_layer(xi, w1, att[0], att[1], b1, rows, cols, n, a.dropout, train, True)
            h = F.dropout(F.elu(h), a.dropout, train)
            return gat_layer(h, w2, att[2], att[3], b2, rows, cols, n, a.dropout, train, False)
        h = torch.sparse.mm(adj, torch.sparse.mm(xi, w1)) + b1
        h = F.dropout(F.relu(h), a.dropout, train)
        return torch.sparse.mm(adj, h @ w2) + b2

    run_epochs("torch", forward, opt, y, masks, a.epochs)

if __name__ == "__main__":
    main()
