"""Execute notebooks in place the way their committed outputs are made.

One torch thread (float32 sums depend on the thread count, and ``pytest --nbval`` compares against outputs
computed with one thread), run from ``notebooks/`` so relative paths resolve as in JupyterLab, and the saved
widget state dropped: it embeds the widgets' JavaScript models (megabytes) and JupyterLab rebuilds it on run.

    python course/execute_notebook.py notebooks/03_hierarchical_learning.ipynb [more.ipynb ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path


def execute(path: Path, *, timeout: int = 1200) -> float:
    """Run every cell of ``path`` top to bottom and write the notebook back; returns the wall seconds."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    args = parser.parse_args(argv)
    if os.environ.get("OMP_NUM_THREADS") != "1":
        os.environ["OMP_NUM_THREADS"] = "1"      # inherited by the kernel
    for path in args.notebooks:
        if path.suffix != ".ipynb" or not path.is_file():
            parser.error(f"notebooks: {path} is not an .ipynb file")
        print(f"{path}: {execute(path):.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
