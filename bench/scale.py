"""hmcpgm at scale: likelihoods -> mLPR -> HierRank -> Bayesian FDR decisions, chunk by chunk.

Usage (from the repository root)::

    python bench/scale.py --objects 100000          # one run: 100,000 objects x cellcycle_GO
    python bench/scale.py --table                   # the scaling table, M = 1e3 .. 1e5, and the plot

One run: the cellcycle_GO hierarchy (4,125 classes; 100,000 objects are 4.1e8
events); theta estimated from cellcycle_GO's training labels; per chunk of
objects, labels drawn from that network and scores ``N(mu * y, 1)`` from a
generator seeded by (seed, chunk number), whose likelihood pairs
``[phi(s), phi(s - mu)]`` are the evidence. Likelihoods live only inside the chunk's
task and are never stored. Then mLPRs (``--version``, ``--engine``), each chunk's
HierRank run and histogram (pass 1, on dask workers with ``--scheduler local``);
then the Bayesian FDR cutoff at ``--alpha`` from the histogram and the decisions
of every chunk (pass 2). The realised false discovery proportion is counted
against the drawn labels (drawn again from the same seeds).

Printed: seconds per stage (summed over the chunks' tasks, i.e. work time; wall
time for the passes), events per second per stage, and peak memory, measured two
ways: ``ru_maxrss`` of this process (resource.getrusage(RUSAGE_SELF), the peak of
the process that holds the histogram and does pass 2) and the peak of the summed
resident memory of this process and all its children (the dask workers), sampled
every 0.2 s with psutil (a spike shorter than that can be missed).

``--table`` runs every size of ``--sizes`` in a fresh subprocess (so each peak is
that size's own), prints the table, and saves the plot to docs/img/scale.png and
the numbers to docs/scale.json. Timings on a shared machine are noisy: compare
within one run.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
from _paths import HMC_DATA  # bench/ is on sys.path when a script runs

ROOT = Path(__file__).resolve().parents[1]
DATA = HMC_DATA  # as bench/parallel.py
GO = DATA / "cellcycle_GO.train.arff"


class SyntheticMlpr:
    """Chunk number -> mLPRs of freshly drawn objects (likelihoods made and dropped inside)."""

    def __init__(self, network, mu, seed, version, engine):
        self.network, self.mu, self.seed = network, mu, seed
        self.version, self.engine = version, engine

    def draw(self, chunk, m):
        rng = np.random.default_rng([self.seed, chunk])
        y = self.network.sample(m, rng)
        s = rng.normal(self.mu * y, 1.0)
        return y, s

    def __call__(self, payload):
        from hmcpgm import mlpr_from_likelihoods

        chunk, m = payload
        t0 = time.perf_counter()
        _, s = self.draw(chunk, m)
        lik = np.exp(-0.5 * np.stack([s**2, (s - self.mu) ** 2], axis=2))
        del s
        t1 = time.perf_counter()
        p = mlpr_from_likelihoods(self.network, lik, version=self.version, engine=self.engine)
        return p, {"likelihoods": t1 - t0, "mlpr": time.perf_counter() - t1}


class PeakMemory:
    """Peak of the summed RSS of this process and its children, sampled by psutil."""

    def __init__(self, every=0.2):
        import psutil

        self.me = psutil.Process()
        self.every = every
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self):
        import psutil

        total = 0
        for proc in [self.me, *self.me.children(recursive=True)]:
            try:
                total += proc.memory_info().rss
            except psutil.Error:
                pass
        self.peak = max(self.peak, total)

    def _run(self):
        while not self._stop.wait(self.every):
            self._sample()

    def __enter__(self):
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()


def one_run(args):
    import hmcpgm
    from hmcpgm import LabelNetwork
    from hmcpgm.scale import open_client, rank_stream

    data = hmcpgm.load_hmc_arff(GO)
    hierarchy = data.hierarchy
    network = LabelNetwork.from_labels(data.labels, hierarchy, close_labels=True)
    del data
    k = hierarchy.n_classes
    m_total = args.objects
    sizes = [min(args.chunk_size, m_total - s) for s in range(0, m_total, args.chunk_size)]
    make = SyntheticMlpr(network, args.mu, args.seed, args.version, args.engine)
    result = {"objects": m_total, "classes": k, "events": m_total * k, "chunk_size": args.chunk_size,
              "version": args.version, "engine": args.engine, "scheduler": args.scheduler or "none",
              "alpha": args.alpha}
    print(f"{m_total} objects x {k} classes = {m_total * k:.3g} events; chunks of {args.chunk_size}; "
          f"mLPR {args.version}/{args.engine}; scheduler {args.scheduler or 'none (this process)'}", flush=True)
    with PeakMemory() as mem:
        client, close = open_client(args.scheduler, n_workers=args.workers) if args.scheduler else (None, None)
        try:
            t0 = time.perf_counter()
            ranked = rank_stream(list(enumerate(sizes)), hierarchy, to_values=make, scheduler=client,
                                 store=args.store or True, progress=not args.quiet, n_objects=m_total)
            t1 = time.perf_counter()
        finally:
            if close:
                close()
        with ranked:
            t_cut = time.perf_counter()
            cut = ranked.bayes_cutoff(args.alpha)
            t2 = time.perf_counter()
            positives, false, t_labels = 0, 0, 0.0
            for s, (_, decisions) in zip(ranked.summaries, ranked.iter_top(cut.rank)):
                t_draw = time.perf_counter()
                y, _ = make.draw(s.chunk, s.n_objects)  # the labels again, for the realised FDP
                positives += int(decisions.sum())
                false += int((decisions.astype(bool) & (y == 0)).sum())
                t_labels += time.perf_counter() - t_draw
            t3 = time.perf_counter()
            stages = ranked.timings
            result["store_gb"] = ranked.store.nbytes / 1e9
    assert positives == cut.rank
    n = m_total * k
    work = {"likelihoods": stages.get("likelihoods", 0.0), "mLPR": stages.get("mlpr", 0.0),
            "HierRank": stages.get("rank", 0.0), "store runs": stages.get("store", 0.0),
            "FDR cutoff (pass 2)": t2 - t_cut, "decisions (pass 2)": t3 - t2 - t_labels}
    result.update(
        seconds=work,
        wall={"pass 1": t1 - t0, "pass 2": t3 - t_cut - t_labels, "total": t1 - t0 + t3 - t_cut - t_labels},
        events_per_second={name: n / sec if sec > 0 else float("inf") for name, sec in work.items()},
        ru_maxrss_gb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9,
        psutil_peak_gb=mem.peak / 1e9, rank=cut.rank, estimated_fdr=1 - cut.precision if cut.rank else None,
        realised_fdp=false / positives if positives else None, threshold=cut.threshold,
    )
    print(f"\n{'stage':<22}{'seconds':>10}{'events/s':>14}")
    for name, sec in work.items():
        print(f"{name:<22}{sec:>10.1f}{result['events_per_second'][name]:>14.3g}")
    wall = result["wall"]
    print(f"wall: pass 1 {wall['pass 1']:.1f} s, pass 2 {wall['pass 2']:.1f} s, total {wall['total']:.1f} s "
          f"(not counted: {t_labels:.1f} s drawing the labels again for the realised FDP)")
    print(f"Bayesian FDR <= {args.alpha}: {cut.rank} positive events (estimated FDR {1 - cut.precision:.4f}, "
          f"realised FDP {result['realised_fdp']:.4f}), block-mean threshold {cut.threshold:.4f}"
          if cut.rank else f"Bayesian FDR <= {args.alpha}: no event called")
    print(f"peak memory: ru_maxrss (this process) {result['ru_maxrss_gb']:.2f} GB; psutil peak of this process "
          f"+ children (summed, sampled every 0.2 s) {result['psutil_peak_gb']:.2f} GB; runs on disk "
          f"{result['store_gb']:.2f} GB")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return result


def table(args):
    rows = []
    for m in args.sizes:
        out = Path(f"/tmp/hmcpgm-scale-{os.getpid()}-{m}.json")
        cmd = [sys.executable, __file__, "--objects", str(m), "--chunk-size", str(min(args.chunk_size, m)),
               "--version", args.version, "--engine", args.engine, "--alpha", str(args.alpha),
               "--mu", str(args.mu), "--seed", str(args.seed), "--json", str(out), "--quiet"]
        if args.scheduler:
            cmd += ["--scheduler", args.scheduler] + (["--workers", str(args.workers)] if args.workers else [])
        if args.store:
            cmd += ["--store", args.store]
        print("$", " ".join(cmd[1:]), flush=True)
        subprocess.run(cmd, check=True)
        rows.append(json.loads(out.read_text()))
        out.unlink()
    stages = list(rows[0]["seconds"])
    print(f"\n{'M':>8} {'events':>9} " + " ".join(f"{s[:12]:>12}" for s in stages)
          + f" {'wall s':>8} {'ru_maxrss':>9} {'psutil':>7}")
    for r in rows:
        print(f"{r['objects']:>8} {r['events']:>9.3g} " + " ".join(f"{r['seconds'][s]:>12.1f}" for s in stages)
              + f" {r['wall']['total']:>8.1f} {r['ru_maxrss_gb']:>8.2f}G {r['psutil_peak_gb']:>6.2f}G")
    (ROOT / "docs/scale.json").write_text(json.dumps(rows, indent=2))
    plot(rows, ROOT / "docs/img/scale.png")
    print("wrote docs/scale.json and docs/img/scale.png")


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    m = [r["objects"] for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    for stage in rows[0]["seconds"]:
        ax1.loglog(m, [max(r["seconds"][stage], 1e-3) for r in rows], "o-", label=stage)
    ax1.loglog(m, [r["wall"]["total"] for r in rows], "k--", label="wall clock, total")
    ax1.set_xlabel("objects M (x 4,125 classes)")
    ax1.set_ylabel("seconds (work summed over chunks)")
    ax1.legend(fontsize=7)
    ax1.set_title("time per stage")
    ax2.semilogx(m, [r["psutil_peak_gb"] for r in rows], "o-", label="this process + dask workers (psutil)")
    ax2.semilogx(m, [r["ru_maxrss_gb"] for r in rows], "s-", label="this process (ru_maxrss)")
    ax2.axhline(4, color="r", ls=":", label="4 GB")
    ax2.set_ylim(0, max(4.5, max(r["psutil_peak_gb"] for r in rows) * 1.1))
    ax2.set_xlabel("objects M")
    ax2.set_ylabel("peak resident memory (GB)")
    ax2.legend(fontsize=7)
    ax2.set_title("peak memory")
    fig.suptitle(f"cellcycle_GO, chunks of {rows[-1]['chunk_size']} objects, mLPR {rows[0]['version']}, "
                 f"Bayesian FDR {rows[0]['alpha']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--chunk-size", type=int, default=1000)
    parser.add_argument("--version", default="nbh", help="mLPR version (default nbh)")
    parser.add_argument("--engine", default="auto", help="inference engine (default auto)")
    parser.add_argument("--scheduler", default=None, help="'local' for a dask LocalCluster, an address, or none")
    parser.add_argument("--workers", type=int, default=None, help="workers of a local cluster (default: cores)")
    parser.add_argument("--store", default=None, help="folder for the runs (default: a temporary folder)")
    parser.add_argument("--alpha", type=float, default=0.1)
    parser.add_argument("--mu", type=float, default=2.0, help="score shift of positives (evidence strength)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the numbers of one run here")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--table", action="store_true", help="the scaling table over --sizes")
    parser.add_argument("--sizes", type=lambda t: [int(float(x)) for x in t.split(",")],
                        default=[1000, 3000, 10_000, 30_000, 100_000])
    args = parser.parse_args()
    if args.table:
        table(args)
    else:
        one_run(args)


if __name__ == "__main__":
    main()
