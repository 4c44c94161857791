"""One peer of `parasol lda` (tomotopy, gensim or WarpLDA) on a held-out split: trains in stages, on
PEERS_THREADS threads (1 unless set), and after each stage writes the model in parasol's format
(docs/lda.md: model.txt + vocab.txt) for `parasol lda-infer --perplexity` to score the held-out
documents by document completion, the one yardstick all systems are measured by. Prints CSV rows:
system,k,seed,work,train_seconds,perplexity (work: Gibbs sweeps for tomotopy, passes for gensim, iterations for WarpLDA; train_seconds: the
peer's own training calls, cumulative, model export and scoring excluded).

Usage: lda_peers.py SYSTEM TRAIN_LINES TEST_LINES K SEED STAGES OUT_DIR PARASOL [WARPLDA_DIR]
STAGES: comma-separated work per stage (e.g. 20,20,40,60,60). Priors as parasol's defaults:
alpha 50/K per topic, beta (eta) 0.01, neither optimised. WarpLDA (built from ../shared/anchors by
the benchmark into WARPLDA_DIR) cannot go on from a run, so each stage is a fresh run of all the
iterations so far, timed by the seconds it prints per iteration (reading its input excluded), and
its model comes from its own dump (`--dumpmodel`: per word, its topic:count pairs).
"""
import os
import re
import subprocess
import sys
import time

import numpy as np

# Threads for every system's training (the benchmark's THREADS): tomotopy's and gensim's workers,
# WarpLDA's OpenMP threads. Scoring stays on one thread: it is not timed.
THREADS = int(os.environ.get("PEERS_THREADS", "1"))


def read_lines(path):
    docs = []
    for line in open(path, encoding="utf-8"):
        words = line.rstrip("\n").split("\t", 1)[-1].split()
        if words:
            docs.append(words)
    return docs


def write_model(out, vocab, counts, alpha, beta):
    """counts: K x V integer array of word-topic counts over `vocab`."""
    os.makedirs(out, exist_ok=True)
    with open(f"{out}/vocab.txt", "w", encoding="utf-8") as f:
        f.writelines(w + "\n" for w in vocab)
    k, v = counts.shape
    with open(f"{out}/model.txt", "w") as f:
        f.write(f"parasol-lda-model 1 {k} {v} {alpha!r} {beta!r}\n")
        for w in range(v):
            nz = np.nonzero(counts[:, w])[0]
            if len(nz):
                f.write(f"{w} " + " ".join(f"{t}:{counts[t, w]}" for t in nz) + "\n")


def perplexity(parasol, test, model):
    r = subprocess.run([parasol, "lda-infer", "--corpus", test, "--format", "lines", "--min-count", "1",
                        "--model", model, "--iterations", "20", "--mh-steps", "2", "--perplexity",
                        "--threads", "1", "--output", f"{model}/doc_topics.txt"],
                       capture_output=True, text=True, check=True)
    return float(re.search(r"held-out perplexity ([0-9.]+)", r.stderr).group(1))


def tomotopy_stages(docs, k, seed, stages):
    import tomotopy as tp
    m = tp.LDAModel(k=k, alpha=50.0 / k, eta=0.01, seed=seed)
    for d in docs:
        m.add_doc(d)
    m.optim_interval = 0  # the prior stays fixed, as parasol's without --optimize-interval
    m.burn_in = 0
    spent = 0.0
    t = time.perf_counter()
    m.train(0, workers=THREADS)  # initialisation: the first topics drawn
    spent += time.perf_counter() - t
    done = 0
    for step in stages:
        t = time.perf_counter()
        m.train(step, workers=THREADS)
        spent += time.perf_counter() - t
        done += step
        vocab = list(m.used_vocabs)
        totals = np.array(m.get_count_by_topics(), dtype=np.float64)
        phi = np.array([m.get_topic_word_dist(t) for t in range(k)])
        # tomotopy's phi is (n_wk + eta) / (n_k + V eta): its integer counts, recovered exactly.
        counts = np.rint(phi * (totals[:, None] + len(vocab) * 0.01) - 0.01).astype(np.int64)
        assert (counts >= 0).all() and (counts.sum(1) == totals).all()
        yield done, spent, vocab, counts


def gensim_stages(docs, k, seed, stages):
    from gensim.corpora import Dictionary
    from gensim.models import LdaMulticore
    dictionary = Dictionary(docs)
    bow = [dictionary.doc2bow(d) for d in docs]
    m = LdaMulticore(id2word=dictionary, num_topics=k, alpha=np.full(k, 50.0 / k), eta=0.01, workers=THREADS,
                     random_state=seed, iterations=50, chunksize=2000)
    vocab = [dictionary[i] for i in range(len(dictionary))]
    spent, done = 0.0, 0
    for passes in stages:
        m.passes = passes
        t = time.perf_counter()
        m.update(bow)
        spent += time.perf_counter() - t
        done += passes
        # lambda = eta + the expected word-topic counts: those, rounded, are the counts.
        counts = np.rint(np.maximum(m.state.get_lambda() - 0.01, 0)).astype(np.int64)
        yield done, spent, vocab, counts


def warplda_stages(train, k, seed, stages, warp, out):
    os.makedirs(out, exist_ok=True)
    prefix = f"{out}/warplda_input"
    if not os.path.exists(f"{prefix}.vocab"):
        with open(f"{prefix}.yahoo", "w", encoding="utf-8") as f:  # "ID ID word word ...", as format reads
            for i, words in enumerate(read_lines(train)):
                f.write(f"{i} {i} {' '.join(words)}\n")
        subprocess.run([f"{warp}/format", "-input", f"{prefix}.yahoo", "-prefix", prefix],
                       capture_output=True, check=True)
    vocab = [line.split()[0] for line in open(f"{prefix}.vocab", encoding="utf-8") if line.strip()]
    done = 0
    for step in stages:
        done += step
        dump = f"{out}/warplda_k{k}_{done}.dump"
        r = subprocess.run([f"{warp}/warplda", "--prefix", prefix, "--k", str(k), "--niter", str(done),
                            "--alpha", "50", "--beta", "0.01", "--perplexity", "-1", "--model", dump,
                            "--dumpmodel=true", "--dumpz=false", "--writeinfo=false"],
                           capture_output=True, text=True, check=True,
                           env=dict(os.environ, OMP_NUM_THREADS=str(THREADS)))
        spent = sum(float(t) for t in re.findall(r"Iteration \d+, ([0-9.]+) s", r.stdout))
        counts = np.zeros((k, len(vocab)), dtype=np.int64)
        with open(dump) as f:
            f.readline()  # "V K alpha beta"
            for w, line in enumerate(f):
                for pair in line.split("\t", 1)[-1].split():
                    t, c = pair.split(":")
                    counts[int(t), w] += int(c)
        os.remove(dump)
        yield done, spent, vocab, counts


def main():
    system, train, test, k, seed, stages, out, parasol = sys.argv[1:9]
    k, seed = int(k), int(seed)
    stages = [int(s) for s in stages.split(",")]
    if system == "warplda":
        stages_run = warplda_stages(train, k, seed, stages, sys.argv[9], out)
    else:
        run = {"tomotopy": tomotopy_stages, "gensim": gensim_stages}[system]
        stages_run = run(read_lines(train), k, seed, stages)
    for done, spent, vocab, counts in stages_run:
        model = f"{out}/{system}_k{k}_s{seed}_{done}"
        write_model(model, vocab, counts, 50.0 / k, 0.01)
        print(f"{system},{k},{seed},{done},{spent:.4f},{perplexity(parasol, test, model):.3f}", flush=True)


if __name__ == "__main__":
    main()
