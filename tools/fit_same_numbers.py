"""Does every figure point give the same numbers in two versions of the code? Not a single number may move.

Runs :func:`resnetlearn.reproduce.points.run_point` on a list of point configurations covering every kind of point
(networks in modes all/hidden/last/ntk with their exact kernel solution, select="val" with fresh and hold-out
validation, ``grid_seeds``, kernels selected by test and validation error, the hand-built solution, §8.2's
networks and mini-batch), once in the code of ``--ref`` (a tree, e.g. ``git worktree add --detach /tmp/base
7fdcdae``) and once in this tree, each in its own process with ``PYTHONPATH`` set to its tree, and compares the
JSON of every result (key order included) except ``seconds``. The configurations are real figure points at tiny
or quick scale (:func:`resnetlearn.reproduce.figures.points`); a ``grid_seeds`` point exists only at cpu and paper
scale, so one tiny thm3 point gets ``grid_seeds`` added.

    OMP_NUM_THREADS=1 python tools/fit_same_numbers.py --ref /tmp/base

prints one line per point and ends "N same, 0 different".
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _first(points, **want):
    """The first point whose fields have the values ``want``."""
    return next(p for p in points if all(p.get(k) == v for k, v in want.items()))


def configs() -> list[dict]:
    """The point configurations compared, one or more of every kind."""
    from resnetlearn.reproduce.figures import points

    fig2a, fig2b = points("fig2a", "tiny", device="cpu"), points("fig2b", "tiny", device="cpu")
    fig2a_val = points("fig2a", "tiny", device="cpu", select="val")
    thm3, thm3_val = points("thm3", "tiny", device="cpu"), points("thm3", "tiny", device="cpu", select="val")
    thm3_quick = points("thm3", "quick", device="cpu")
    quick_val = (points("fig2a", "quick", device="cpu", select="val")
                 + points("thm3", "quick", device="cpu", select="val"))
    fig4_quick = points("fig4", "quick", device="cpu")
    companion, fig4 = points("companion", "tiny", device="cpu"), points("fig4", "tiny", device="cpu")
    companion_quick = points("companion", "quick", device="cpu")
    fig4b = points("fig4b", "tiny", device="cpu")
    net3 = _first(thm3, mode="all")
    holdout = dict(_first(fig2a, model="2layer", mode="last"), select="val")  # a hold-out key, still stored
    return [
        _first(fig2a, model="3resnet", mode="all"),
        _first(fig2a, model="3resnet", mode="ntk"),  # with its exact kernel solution
        _first(fig2a, model="2layer", mode="last"),
        _first(fig2b, model="3resnet", mode="hidden"),
        _first(fig2a_val, model="3resnet", mode="all"),  # select="val", fresh validation (quick-val's rule)
        _first(fig2a_val, model="3layer", mode="ntk"),  # ... and its exact kernel on the same validation samples
        holdout,
        _first(quick_val, model="3resnet", mode="all"),  # results/quick-val: 4 × 3 grid, 4 fresh seeds
        _first(quick_val, model="2layer", mode="ntk"),
        _first(quick_val, model="ntk:2layer", n_train=250),
        dict(net3, grid_seeds=[0, 1, 2], rerun_seeds=[]),  # the cpu scale's robust grid, at tiny size
        _first(thm3, model="gaussian"),
        _first(thm3, model="ntk_inf:2layer"),
        _first(thm3_val, model="gaussian"),  # a kernel selected on validation samples
        _first(thm3_quick, model="ntk:2layer", n_train=250),  # a finite-width kernel at quick scale
        _first(thm3_quick, model="conjugate:3resnet", n_train=250),
        net3,
        _first(companion, model="3layer", mode="hidden"),
        _first(companion, model="2layer", mode="ntk"),
        _first(companion_quick, model="3layer", mode="ntk", n_train=100),  # a 4 × 3 grid, 4 fresh seeds
        _first(companion_quick, model="2layer", mode="hidden", n_train=100),
        _first(fig4, model="hand_built"),
        _first(fig4, model="2layer_signs"),  # keeps every grid run (§8.2)
        _first(fig4b, model="2layer_signs"),  # §8.2's mini-batch 100
        _first(fig4_quick, model="hand_built", wd=1e-3),
        _first(fig4_quick, model="2layer_signs"),
    ]


def _run(tree: Path, cfg_file: Path, out_file: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(cfg_file), str(out_file)],
                   cwd=tree, env=env, check=True)


def _worker(cfg_file: str, out_file: str) -> None:
    import resnetlearn
    from resnetlearn.reproduce.points import run_point

    print(f"  running in {Path(resnetlearn.__file__).parent.parent}", file=sys.stderr)
    out = []
    for cfg in json.loads(Path(cfg_file).read_text()):
        result = run_point(cfg)
        result.pop("seconds")
        out.append(json.dumps(result))
    Path(out_file).write_text(json.dumps(out))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ref", type=Path, help="the tree of the reference code (e.g. a worktree of main)")
    ap.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(*args.worker)
        return 0
    cfgs = configs()
    with tempfile.TemporaryDirectory() as tmp:
        cfg_file = Path(tmp) / "configs.json"
        cfg_file.write_text(json.dumps(cfgs))
        results = {}
        for name, tree in (("ref", args.ref.resolve()), ("here", ROOT)):
            _run(tree, cfg_file, Path(tmp) / f"{name}.json")
            results[name] = json.loads((Path(tmp) / f"{name}.json").read_text())
    same = 0
    for cfg, a, b in zip(cfgs, results["ref"], results["here"]):
        ok = a == b
        same += ok
        label = f"{cfg['figure']} {cfg['model']}({cfg['mode']}) m={cfg['m']} N={cfg['n_train']} select={cfg['select']}"
        extra = " grid_seeds" if cfg.get("grid_seeds") else ""
        print(f"{'same' if ok else 'DIFFERENT'}: {label}{extra} [{cfg['scale']}]")
    print(f"{same} same, {len(cfgs) - same} different")
    return 0 if same == len(cfgs) else 1


if __name__ == "__main__":
    sys.exit(main())
