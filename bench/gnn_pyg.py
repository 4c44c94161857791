"""The GCN and the one-head GAT of `parasol gnn` written with PyTorch Geometric, as its examples
write them (examples/gcn.py, examples/gat.py): GCNConv with cached normalisation, GATConv with
self-loops and attention dropout, Adam with weight decay on the first layer, dropout on the input
and the hidden layer. The input features stay sparse (a CSR tensor, which PyG's linear layers take),
row-normalised as parasol and PyG's NormalizeFeatures do; the graph is read as bench/gnn_torch.py
reads it, made symmetric without repeats or self-loops. The same models, data and
hyper-parameters as `parasol gnn`, so the two can be timed side by side.

Usage: gnn_pyg.py GRAPH_DIR [--model gcn|gat] [--epochs 200] [--seed 1] [--hidden 16]
                            [--dropout 0.5] [--lr 0.01] [--weight-decay 5e-4] [--threads 1]
Prints one line: pyg: epochs E median_epoch_ms T val_accuracy V test_accuracy A peak_rss_mb M
"""
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gnn_torch import run_epochs, setup  # noqa: E402

warnings.filterwarnings("ignore")  # PyG's and torch's notices about TorchScript and sparse CSR
from torch_geometric.nn import GATConv, GCNConv  # noqa: E402


def main():
    a, n, x, shape, edges, labels, splits = setup()
    e = edges[edges[:, 0] != edges[:, 1]]
    both = np.unique(np.concatenate([e, e[:, ::-1]]), axis=0)
    edge_index = torch.tensor(both.T.copy())
    y = torch.tensor(labels)
    masks = {s: torch.tensor(splits == s) for s in ("train", "val", "test")}
    classes = int(labels.max()) + 1

    if a.model == "gcn":
        first = GCNConv(shape[1], a.hidden, cached=True)
        second = GCNConv(a.hidden, classes, cached=True)
    else:
        first = GATConv(shape[1], a.hidden, heads=1, dropout=a.dropout)
        second = GATConv(a.hidden, classes, heads=1, concat=False, dropout=a.dropout)
    model = torch.nn.ModuleList([first, second])
    opt = torch.optim.Adam([dict(params=first.parameters(), weight_decay=a.weight_decay),
                            dict(params=second.parameters(), weight_decay=0)], lr=a.lr)
    x_idx, x_val = x.indices(), x.values()
    x_csr = x.to_sparse_csr()

    def forward(train):
        model.train(train)
        if train and a.dropout > 0:  # dropout on the sparse input's nonzeros
            keep = (torch.rand(x_val.shape) >= a.dropout).float() / (1 - a.dropout)
            xi = torch.sparse_coo_tensor(x_idx, x_val * keep, shape).to_sparse_csr()
        else:
            xi = x_csr
        h = first(xi, edge_index)
        h = F.elu(h) if a.model == "gat" else F.relu(h)
        h = F.dropout(h, a.dropout, train)
        return second(h, edge_index)

    run_epochs("pyg", forward, opt, y, masks, a.epochs)

if __name__ == "__main__":
    main()
