#!/usr/bin/env python3
"""A corpus drawn from the LDA generative model, in parasol's lines format (NAME<TAB>words).

Usage: lda_synthetic.py OUT TOKENS [--topics K] [--vocab V] [--doc-length L] [--alpha A] [--seed S]

Topics are Dirichlet(0.05) draws over a Zipf-weighted vocabulary (a realistic mix of frequent and
rare words); documents have Poisson(L) tokens with proportions from Dirichlet(alpha). Words are
strings of letters (parasol's tokeniser keeps letters only), none of them a stop word.
"""
import argparse

import numpy as np


def word(i):
    letters = "bcdfghjklmnpqrstvwxz"  # no vowels: never an English stop word
    s = ""
    while True:
        s = letters[i % len(letters)] + s
        i //= len(letters)
        if i == 0:
            break
    return "q" + s.rjust(3, "b")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("tokens", type=int)
    p.add_argument("--topics", type=int, default=200)
    p.add_argument("--vocab", type=int, default=50000)
    p.add_argument("--doc-length", type=int, default=200)
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    rng = np.random.default_rng(a.seed)
    zipf = 1.0 / np.arange(1, a.vocab + 1) ** 1.05
    phi = rng.dirichlet(np.full(a.vocab, 0.05), size=a.topics) * zipf
    phi /= phi.sum(axis=1, keepdims=True)
    cum_phi = np.cumsum(phi, axis=1)
    docs = max(1, a.tokens // a.doc_length)
    lengths = np.maximum(1, rng.poisson(a.doc_length, size=docs))
    theta = rng.dirichlet(np.full(a.topics, a.alpha), size=docs)
    cum_theta = np.cumsum(theta, axis=1)
    # Every token's topic (per document), then every token's word (per topic).
    doc_of = np.repeat(np.arange(docs), lengths)
    z = np.empty(doc_of.size, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)))
    for d in range(docs):
        u = rng.random(lengths[d])
        z[starts[d]:starts[d + 1]] = np.minimum(np.searchsorted(cum_theta[d], u), a.topics - 1)
    w = np.empty_like(z)
    for k in range(a.topics):
        idx = np.nonzero(z == k)[0]
        w[idx] = np.minimum(np.searchsorted(cum_phi[k], rng.random(idx.size)), a.vocab - 1)
    names = [word(i) for i in range(a.vocab)]
    with open(a.out, "w") as f:
        for d in range(docs):
            f.write(f"doc{d}\t" + " ".join(names[i] for i in w[starts[d]:starts[d + 1]]) + "\n")
    print(f"{a.out}: {docs} documents, {int(lengths.sum())} tokens, {a.topics} topics over {a.vocab} words")


if __name__ == "__main__":
    main()
