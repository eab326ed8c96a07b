"""How many chunks each network point of a figure trains its lr × wd grid in, on a GPU of a given size shared by
W workers (at --scale paper the 90 models of a fig4b point at m = 1000 need ~102 GiB as one program).

No GPU is needed: the bytes come from :func:`resnetlearn.learners.training.models_that_fit` (the accounting and
limit the training checks, :func:`resnetlearn.memory.largest_fitting`) with the bytes a worker may plan with on an
empty device of that size (:func:`resnetlearn.memory.device_share`), and the chunks from
:func:`resnetlearn.learners.search.chunk_size`, as :func:`resnetlearn.reproduce.fit.fit_network` computes them.

    python gpu/memory_chunks.py                       # fig4b and companion, H100 and H200, 1 and 6 workers
    python gpu/memory_chunks.py fig2a --gib 80 --workers 1 6 --all
"""

from __future__ import annotations

import argparse
import math

from resnetlearn import memory
from resnetlearn.learners.search import chunk_size
from resnetlearn.learners.training import Learner, models_that_fit, training_bytes
from resnetlearn.reproduce.figures import points
from resnetlearn.reproduce.point import Point
from resnetlearn.reproduce.points import target_of

GPUS = {"H100": 80, "H200": 139}
"""GiB of memory torch reports on each (the project's device notes: about 78-80 and 139 GiB)."""


def plan(config: dict, *, total: int, workers: int) -> dict:
    """The point's grid size, its bytes as one program, how many fit and the chunks, on ``total`` bytes."""
    point = Point.of_config(config)
    target, search = target_of(config), point.search
    n_models = len(search.lrs) * len(search.wds) * len(search.grid_seeds or (0,))
    n_eval = max(point.data.n_train, point.data.n_test, search.n_val or 0)
    sizes = dict(d=target.d, k=target.k, n_eval=n_eval)
    have = memory.device_share(total, total, workers)
    fits = models_that_fit(point.learner, n_models, **sizes, have=have)
    size = chunk_size(n_models, fits)
    one_program = training_bytes(point.learner.arch, target.d, target.k, point.learner.m, n_models=n_models,
                                 n_eval=n_eval, mode=point.learner.mode)
    return dict(n=n_models, gib=one_program / 2**30, limit=memory.MEMORY_FRACTION * have / 2**30, fits=fits,
                chunks=0 if fits == 0 else (1 if size is None else math.ceil(n_models / size)), size=size)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("figures", nargs="*", default=["fig4b", "companion"])
    ap.add_argument("--scale", default="paper")
    ap.add_argument("--gib", type=float, nargs="*", help="device sizes in GiB (default: H100 80, H200 139)")
    ap.add_argument("--workers", type=int, nargs="*", default=[1, 6])
    ap.add_argument("--all", action="store_true", help="every network point, not only those at the largest N, m")
    args = ap.parse_args(argv)
    gpus = {f"{g:g} GiB": g for g in args.gib} if args.gib else {f"{n} ({g} GiB)": g for n, g in GPUS.items()}
    for fig in args.figures:
        pts = [p for p in points(fig, args.scale) if isinstance(Point.of_config(p).learner, Learner)]  # networks
        if not args.all:  # the points that need the most memory: the widest, at the largest N
            big = max((p["m"], p["n_train"]) for p in pts)
            pts = [p for p in pts if (p["m"], p["n_train"]) == big or (fig == "fig4b" and p["m"] >= 1000)]
        for p in pts:
            label = f"{fig} {p['model']}({p['mode']}) m={p['m']} N={p['n_train']}"
            for gpu, gib in gpus.items():
                for w in args.workers:
                    r = plan(p, total=int(gib * 2**30), workers=w)
                    what = ("refused: not one model fits" if r["chunks"] == 0 else
                            "one program" if r["chunks"] == 1 else f"{r['chunks']} chunks of <= {r['size']}")
                    print(f"{label:42s} {gpu:16s} workers={w}: {r['n']} models need {r['gib']:6.1f} GiB as one "
                          f"program; limit {r['limit']:6.1f} GiB -> {what}")


if __name__ == "__main__":
    main()
