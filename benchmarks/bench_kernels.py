"""Kernel performance on this machine (ResNet paper §3.1 kernels).

* infinite-width NTK Gram matrix (3resnet_eq21, the most expensive recursion) for N = 10 000;
* kernel ridge regression (float64 Cholesky) for N = 10 000;
* empirical NTK of the §6 3resnet with m = 1000, k = 15 on N = 1000;
* the exact (ntk) solution of a §8.1 point (network_kernel_errors, 2layer m = 200, N = ``--n-exact``)
  with the full multi-output NTK (a dual of size N·k) and with ``coupling="per_output"``.

    python benchmarks/bench_kernels.py [--json out.json]
"""

import argparse
import json
import time

import torch

import resnetlearn as rl
from resnetlearn import kernels as K
from resnetlearn.kernels.experiments import network_kernel_errors
from resnetlearn.kernels.ridge import krr_fit, krr_predict
from resnetlearn.learners import networks
from resnetlearn.learners.training import Learner


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--n-exact", type=int, default=300, help="N of the exact (ntk) timing (dual size N·15)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    inst = rl.parity_instance()
    x = inst.sample(args.n, seed=0, dtype=torch.float64).x
    y = inst.sample(args.n, seed=0, dtype=torch.float64).y
    kern, t_inf = timed(lambda: K.infinite_width(x, arch="3resnet_eq21"))
    gram = kern[1]
    y_mean = y.mean(0)  # with an unpenalised label mean, as the kernel experiments fit
    _, t_krr = timed(lambda: y_mean + krr_predict(gram[:100], krr_fit(gram, y - y_mean,
                                                                        1e-6 * float(gram.diagonal().mean()))))
    x1k = x[:1000]
    p = networks.init_params("3resnet", d=30, k=15, m=1000, seeds=[0], dtype=torch.float64)
    _, t_emp = timed(lambda: K.ntk(x1k, arch="3resnet", params=p))
    tr, te = inst.sample(args.n_exact, seed=0, dtype=torch.float64), inst.sample(2000, seed=1, dtype=torch.float64)
    full, t_full = timed(lambda: network_kernel_errors(tr, te, Learner("2layer", "ntk", m=200)))
    per, t_per = timed(lambda: network_kernel_errors(tr, te, Learner("2layer", "ntk", m=200),
                                                          coupling="per_output"))
    out = dict(device=rl.describe_device("cpu"), torch=torch.__version__, n=args.n,
               infinite_ntk_gram_s=round(t_inf, 2), krr_fit_predict_s=round(t_krr, 2),
               empirical_ntk_3resnet_m1000_n1000_s=round(t_emp, 2),
               exact_ntk_2layer_m200=dict(n=args.n_exact, full_s=round(t_full, 2), full_test=full["test_error"],
                                          per_output_s=round(t_per, 2), per_output_test=per["test_error"]))
    print(json.dumps(out, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
