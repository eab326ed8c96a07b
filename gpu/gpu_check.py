"""The GPU path, checked in one go on a CUDA machine (nobody exercises it on CPU-only CI).

1. device selection picks CUDA and data land on it;
2. batched training on CUDA reproduces the CPU numbers (same seeds; float32
   kernels differ, so agreement is to a tolerance) and is deterministic on CUDA;
3. no host synchronisation inside an epoch of the engine
   (``torch.cuda.set_sync_debug_mode("error")`` around the step loop, every mode);
3b. epochs replayed as recorded CUDA graphs (resnetlearn.learners.capture) give exactly the eager engine's
   test errors, every mode and layer-wise (the script exits with status 1 if not, before any benchmark,
   so gpu/gpu_paper_scale.sh stops rather than compute figures with a wrong engine);
4. the training benchmark (engine eager vs captured vs the plain batched loop vs one model at a
   time) for 12 and 90 models at m = 200 and m = 2000, next to the batched
   CPU time of the 12-point grid;
5. notebook 03 executed with the GPU as its device.

The paper-scale figures are a separate step (gpu/gpu_paper_scale.sh),
resumable from the results store.

Writes everything to gpu/results/gpu_check.json (or --out).

    python gpu/gpu_check.py [--epochs 800] [--out gpu/results/gpu_check.json]
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import torch

import resnetlearn as rl
from resnetlearn.learners.training import Learner, Protocol, RunOptions, train_models

ROOT = Path(__file__).resolve().parents[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=800)
    ap.add_argument("--out", default=str(ROOT / "gpu" / "results" / "gpu_check.json"))
    ap.add_argument("--quick", action="store_true",
                    help="checks 1-3 and the benchmark of 12 and 90 models at m = 200 only (about a minute): "
                         "for a device session that needs its time for the figures")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("gpu_check: no CUDA device here; run this on the GPU machine")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    out = {"device": rl.describe_device("cuda"), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d")}
    assert rl.select_device().type == "cuda"
    inst = rl.parity_instance()
    s = inst.sample(10, seed=0, device="cuda")
    out["data_on_cuda"] = s.x.is_cuda and torch.equal(s.x.cpu(), inst.sample(10, seed=0, device="cpu").x)

    tr, te = inst.sample(500, seed=0, device="cpu"), inst.sample(2000, seed=1, device="cpu")
    short = Protocol.quick(50)
    lrs, wds = [0.05, 0.1, 0.2], [0.0, 0.005, 0.005]
    kw = dict(protocol=short, progress=False)
    kw = dict(kw, lrs=lrs, wds=wds, seeds=[0, 1, 2])
    net = Learner("3resnet", "all", m=200)
    cpu = train_models(tr, te, net, options=RunOptions(device="cpu"), **kw)
    gpu = train_models(tr, te, net, options=RunOptions(device="cuda"), **kw)
    gpu2 = train_models(tr, te, net, options=RunOptions(device="cuda"), **kw)
    out["cpu_vs_cuda_test_error"] = [cpu.test_error.tolist(), gpu.test_error.tolist()]
    out["cuda_deterministic"] = bool(torch.equal(gpu.test_error, gpu2.test_error))

    out["sync_free_step_loop"] = sync_free(tr)
    out["captured_equals_eager"] = captured_vs_eager(tr, te)
    print("captured vs eager:", out["captured_equals_eager"], flush=True)
    if not all(v["equal"] for v in out["captured_equals_eager"].values()):
        Path(args.out).write_text(json.dumps(out, indent=1))
        sys.exit("gpu_check: the captured engine differs from the eager one; not benchmarking (see the JSON)")
    out["bench_training_cuda"] = {}
    for grid in ("bench", "paper"):
        for m in (200,) if args.quick else (200, 2000):
            name = f"{grid}_m{m}"
            cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_training.py"), "--device", "cuda", "--grid", grid,
                   "--m", str(m), "--epochs", str(args.epochs), "--json", f"/tmp/bench_{name}.json"]
            if grid == "paper" or m == 2000 or args.quick:
                cmd.append("--no-sequential")  # one model at a time would take most of the device budget
            bench = subprocess.run(cmd, capture_output=True, text=True)
            out["bench_training_cuda"][name] = json.loads(Path(f"/tmp/bench_{name}.json").read_text()) \
                if bench.returncode == 0 else {"error": bench.stderr[-2000:]}
            print(name, out["bench_training_cuda"][name], flush=True)
    if args.quick:
        Path(args.out).write_text(json.dumps(out, indent=1))
        print(json.dumps(out, indent=1))
        return
    t0 = time.perf_counter()
    grid = [(lr, wd) for lr in (0.02, 0.05, 0.1, 0.2) for wd in (0.0, 1e-3, 5e-3)]
    p = Protocol(epochs=args.epochs, eval_every=args.epochs)
    train_models(tr, te, Learner("3resnet", "all", m=200), lrs=[g[0] for g in grid], wds=[g[1] for g in grid],
                 seeds=[0] * 12, protocol=p, progress=False, options=RunOptions(device="cpu"))
    out["batched_cpu_same_grid_s"] = round(time.perf_counter() - t0, 2)

    t0 = time.perf_counter()
    nb = subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                         str(ROOT / "notebooks" / "03_hierarchical_learning.ipynb"), "--output",
                         "/tmp/nb03_gpu.ipynb"], capture_output=True, text=True)
    out["notebook03_on_gpu"] = {"ok": nb.returncode == 0, "seconds": round(time.perf_counter() - t0, 1),
                                "mentions_gpu": "GPU" in Path("/tmp/nb03_gpu.ipynb").read_text()
                                if nb.returncode == 0 else nb.stderr[-2000:]}
    Path(args.out).write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))


def captured_vs_eager(tr, te) -> dict:
    """Test errors of the same models trained eagerly and with recorded epochs, every mode (and layer-wise);
    one model diverges on purpose (lr 50), so the divergence mask is compared too."""
    res = {}
    cases = [(mode, Protocol.quick(20)) for mode in ("all", "hidden", "last", "ntk")]
    cases.append(("all-layerwise", Protocol(epochs=20, layerwise=True)))
    for name, protocol in cases:
        mode = name.split("-")[0]
        kw = dict(protocol=protocol, progress=False)
        runs = [train_models(tr, te, Learner("3resnet", mode, m=200), lrs=[0.05, 0.1, 50.0], wds=[0.0, 0.005, 0.0],
                             seeds=[0, 1, 2], options=RunOptions(device="cuda", capture=c), **kw)
                for c in (False, True)]
        a, b = (torch.nan_to_num(r.test_error, nan=-1.0) for r in runs)
        res[name] = {"equal": bool(torch.equal(a, b)) and bool(torch.equal(runs[0].diverged, runs[1].diverged)),
                     "eager": runs[0].test_error.tolist(), "captured": runs[1].test_error.tolist()}
    return res


def sync_free(train) -> dict:
    """Run one epoch of every mode with CUDA's sync debug mode set to raise on a synchronisation."""
    from resnetlearn.learners import networks
    from resnetlearn.learners.engine import State

    x, y = train.x.cuda(), train.y.cuda()
    res = {}
    for mode in ("all", "hidden", "last", "ntk"):
        p0 = networks.init_params("3resnet", d=x.shape[1], k=y.shape[1], m=200, seeds=[0, 1], device="cuda")
        lr = torch.tensor([0.05, 1e4], device="cuda")
        state = State("3resnet", mode, p0, lr=lr, wd=torch.zeros(2, device="cuda"), protocol=Protocol.quick(2),
                       seeds=[0, 1])
        state.start_phase(None)
        state.epoch(x, y, 0, cancel=None)  # warm-up (allocator, cuBLAS handles)
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            state.epoch(x, y, 1, cancel=None)
            res[mode] = "no synchronisation"
        except RuntimeError as e:
            res[mode] = f"synchronised: {e}"[:300]
        finally:
            torch.cuda.set_sync_debug_mode("default")
    return res


if __name__ == "__main__":
    main()
