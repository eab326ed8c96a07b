"""Run chosen points of a figure into a results store, in an order of our choosing, and log each one.

A long background job's runner: the points are exactly those :func:`resnetlearn.reproduce.figures.points` defines (so
``python -m resnetlearn reproduce FIG --scale SCALE --out OUT`` later reuses every one of them and writes the
tables), filtered by ``--where key=value`` and run with the most informative first (``--first key=value``).
Points already stored are skipped, so a killed run resumes where it stopped. No table is written here.

    nice -n 19 env OMP_NUM_THREADS=1 .venv/bin/python tools/run_store_points.py fig3 --scale cpu \\
        --out results/cpu --where mode=all --where n_train=1000 --first beta=0.5 --first m=200 \\
        >> /tmp/fig3_n1000.log 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from resnetlearn.reproduce.figures import point_label
from resnetlearn.reproduce.figures import points as figure_points
from resnetlearn.reproduce.points import run_point
from resnetlearn.reproduce.store import ResultsStore


def _value(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def _pairs(items):
    out = []
    for item in items or []:
        key, _, value = item.partition("=")
        out.append((key, _value(value)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("figure")
    ap.add_argument("--scale", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--select", default="test")
    ap.add_argument("--where", action="append", help="key=value a point must have (repeatable)")
    ap.add_argument("--first", action="append", help="key=value run first (repeatable; earlier ones weigh more)")
    args = ap.parse_args(argv)
    where, first = _pairs(args.where), _pairs(args.first)
    store = ResultsStore(f"{args.out}/store")
    pts = [p for p in figure_points(args.figure, args.scale, select=args.select)
           if all(p.get(k) == v for k, v in where)]
    pts.sort(key=lambda p: [p.get(k) != v for k, v in first])
    todo = [p for p in pts if store.get(p) is None]
    print(f"{time.strftime('%H:%M:%S')} {args.figure} {args.scale}: {len(pts)} points selected, {len(todo)} to run "
          f"(torch threads {torch.get_num_threads()})", flush=True)
    for i, p in enumerate(todo, 1):
        t0 = time.perf_counter()
        res = run_point(p)
        store.put(p, res)
        errs = res.get("seed_errors") or [res.get("test_error")]
        print(f"{time.strftime('%H:%M:%S')} [{i}/{len(todo)}] {point_label(p)} N={p['n_train']}: "
              f"lr {res.get('lr')} wd {res.get('wd')} seeds {', '.join(f'{e:.3f}' for e in errs)} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
    print(f"{time.strftime('%H:%M:%S')} done", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
