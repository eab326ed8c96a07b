"""Command line: ``python -m resnetlearn reproduce FIGURE [--scale tiny|quick|cpu|paper] [--device D] [--out DIR]``."""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor

from .reproduce import FIGURES, SCALES, run_figure, write_outputs, write_provenance


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m resnetlearn", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    rp = sub.add_parser("reproduce", help="run (or resume) one of the paper's experiments")
    rp.add_argument("figure", choices=FIGURES + ("all",))
    rp.add_argument("--scale", choices=SCALES, default="quick")
    rp.add_argument("--device", default=None, help="cpu, cuda, mps (default: GPU when present)")
    rp.add_argument("--out", default="results", help="directory for the results store, tables and plots")
    rp.add_argument("--select", choices=["test", "val"], default="test",
                    help="pick lr/wd by test error (as the paper) or by a validation split")
    rp.add_argument("--workers", type=int, default=0,
                    help="run points in this many local processes (0: in this process)")
    args = ap.parse_args(argv)
    figures = FIGURES if args.figure == "all" else (args.figure,)
    executor = ProcessPoolExecutor(args.workers) if args.workers > 0 else None
    try:
        for fig in figures:
            res = run_figure(fig, args.scale, args.device, out=f"{args.out}/store", executor=executor,
                             select=args.select)
            paths = write_outputs(res, args.out)
            write_provenance(res, args.out, args.scale, "python -m resnetlearn " + " ".join(argv or sys.argv[1:]))
            print(res.summary)
            print(f"  {len(res.rows)} points ({res.skipped} reused from the store) in {res.wall_time:.0f} s; "
                  f"table {paths['table']}, plot {paths['plot']}")
    finally:
        if executor is not None:
            executor.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
