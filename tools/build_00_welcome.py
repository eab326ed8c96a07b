import nbformat as nbf

nb = nbf.v4.new_notebook()
cells = []
md = lambda s: cells.append(nbf.v4.new_markdown_cell(s.strip()))
def code(s, tags=()):
    c = nbf.v4.new_code_cell(s.strip())
    if tags:
        c.metadata["tags"] = list(tags)
    cells.append(c)

md(r"""
# 0 · Welcome: what ResNet can learn that kernels cannot

This package walks through two papers:

* Z. Allen-Zhu and Y. Li, *What Can ResNet Learn Efficiently, Going Beyond Kernels?* (NeurIPS 2019), cited as **[AL]**;
* Z. Allen-Zhu, Y. Li and Y. Liang, *Learning and Generalization in Overparameterized Neural Networks, Going Beyond Two Layers* (NeurIPS 2019), cited as **[ALL]**.

The claim in one line: there are targets of the form $H(x) = F(x) + \alpha\, G(F(x))$ that a three-layer ResNet trained by SGD learns from few samples, while *every* kernel method (including the neural tangent kernel) needs far more. This notebook is a short tour of the objects involved; the numbered notebooks that follow go deeper.

Each code cell is a short call into the `resnetlearn` library; the mathematics lives there, with paper references in its docstrings.
""")
code("""
import matplotlib.pyplot as plt

import resnetlearn as rl

print("resnetlearn", rl.__version__, "| running on", rl.describe_device())
""", tags=["nbval-ignore-output"])
md(r"""
## The concept class

[AL, eq 2.2 and Concept 1, eq 5.1–5.2] considers targets

$$H(x) = \beta\,F(x) + \alpha\,G(F(x)),\qquad F:\mathbb R^d\to\mathbb R^k,\; G:\mathbb R^k\to\mathbb R^k,\; \alpha\in[0,1),$$

where each output of $F$ and $G$ is a small two-layer network with a smooth activation, $F_r(x)=\sum_i a_{r,i}\,\phi_{r,i}(\langle w_{r,i},x\rangle)$. The paper's main statement uses $\beta=1$; the experiments of [AL, arXiv v3 §8.1, Figure 3] also vary $\beta$.

Think of $F$ as the *base signal*: simple, and carrying most of the target. $\alpha G(F)$ is the *composite signal*: smaller, but complicated as a function of $x$.

The experiment of [AL, arXiv v3 §8.1] uses $x$ uniform on $\{\pm1\}^{30}$, $k=15$, $\alpha=0.3$,
$F(x) = (x_1x_2,\ x_3x_4,\ \dots,\ x_{29}x_{30})$ and $G_i(y) = (-1)^i\,y_1y_2y_3y_4$.
""")
code("""
inst = rl.parity_instance()          # d = 30, k = 15, alpha = 0.3, beta = 1
print(inst)
s = inst.sample(4, seed=0)
print("x[:, :8] =\\n", s.x[:, :8])
print("beta*F(x)[:, :4] =\\n", s.base[:, :4])
print("alpha*G(F(x))[:, :4] =\\n", s.composite[:, :4])
""")
md(r"""
### Why $G(F(x))$ is a single degree-8 parity

On the hypercube every $x_j^2 = 1$, so
$G_i(F(x)) = (-1)^i (x_1x_2)(x_3x_4)(x_5x_6)(x_7x_8) = (-1)^i\,x_1x_2\cdots x_8$.
The composite signal is one parity of degree 8, while $F$ is fifteen parities of degree 2. Let us check the identity on many random inputs.
""")
code("""
import torch

big = inst.sample(100_000, seed=1, dtype=torch.float64)
parity8 = big.x[:, :8].prod(dim=1)
signs = torch.tensor([(-1) ** i for i in range(1, 16)], dtype=torch.float64)
gap = (big.composite - inst.alpha * signs * parity8[:, None]).abs().max()
print(f"max |alpha*G_i(F(x)) - alpha*(-1)^i x1...x8| over 100000 inputs: {float(gap):.1e}")
""")
md(r"""
## The threshold $k\alpha^2$

A model that learns $F$ perfectly but nothing of $G$ predicts $\beta F(x)$ and makes test error
$\mathbb E\,\|\alpha G(F(x))\|^2 = k\alpha^2$ (each $G_i = \pm1$). With $k=15$, $\alpha=0.3$ this is **1.35**: the line against which [AL, arXiv v3 §8.1, Figure 2] reads every curve. Anything clearly below it has learned part of the composite signal. Predicting $0$ costs $k(\beta^2+\alpha^2) = 16.35$ (the parities are orthonormal, so the cross terms vanish).
""")
code("""
exact = inst.reference_errors()                     # closed form (Parseval on the hypercube)
mc = rl.Target.reference_errors(inst, n_mc=200_000)  # Monte Carlo, as a cross-check
print(f"learn F only : exact {exact.f_only:.4f}   Monte Carlo {mc.f_only:.4f}")
print(f"predict zero : exact {exact.zero:.4f}  Monte Carlo {mc.zero:.2f} ± {mc.zero_se:.2f}")
""")
md(r"""
## How hard is a function? The complexity measures

[AL, §4] measures a smooth activation $\phi(z)=\sum_i c_i z^i$ by two weighted sums of its Taylor coefficients, with a large constant $C^*$ (the paper suggests $10^4$):

$$\mathfrak C_\varepsilon(\phi,R) = \sum_i \Big((C^*R)^i + \big(\tfrac{\sqrt{\log(1/\varepsilon)}}{\sqrt i}C^*R\big)^i\Big)|c_i|,\qquad
\mathfrak C_s(\phi,R) = C^*\sum_i (i+1)R^i|c_i| .$$

$\mathfrak C_s$ governs the number of samples, $\mathfrak C_\varepsilon$ the network size [ALL, §2], which weights $\mathfrak C_s$ by $(i+1)^{1.75}$ instead). The library computes both from exact sympy series and arbitrary-precision sums, because the values are enormous.
""")
code("""
rows = [("sin", {}), ("cos", {}), ("exp", {}), ("sin", {"c": 3}), ("power", {"p": 4}), ("tanh", {})]
print(f"{'activation':<14}{'C_s (resnet)':>14}{'C_s (companion)':>18}{'log10 C_eps(0.01)':>20}")
for name, kw in rows:
    phi = rl.activation(name, **kw)
    cs = rl.complexity_s(phi)
    cs2 = rl.complexity_s(phi, variant="companion")
    try:
        ce = f"{rl.complexity_eps(phi, 0.01).log10:20.1f}"
    except rl.NonConvergentSeriesError:
        ce = f"{rl.complexity_eps(phi, 0.01, truncate=True).log10:15.1f} (*)"
    print(f"{phi.name:<14}{float(cs.value):14.1f}{float(cs2.value):18.1f}{ce:>20}")
print("(*) tanh's series diverges at C*R = 10^4 > pi/2: truncated at degree Θ(log 1/ε) as in Example 4.1")
""")
md(r"""
## Composition makes functions expensive

The running example of [AL, §2.1] and of the talk: $F(x)=\sqrt d\,\langle w,x\rangle$ with $\|w\|=1$, and $G(z)=z^{10}$.
Separately they are cheap: $\mathfrak C_s(F) = 2C^*\sqrt d$ and $\mathfrak C_s(G) = 11\,C^*$. Composed, $G(F(x)) = d^5\langle w,x\rangle^{10}$ has $\mathfrak C_s = 11\,C^*d^5$. A kernel method has to pay for $G\circ F$; the ResNet pays only for $F$ and $G$ separately.
""")
code("""
ds = [2, 4, 8, 16, 30, 64, 128]
table = {d: rl.linear_power_example(d) for d in ds}
print(f"{'d':>4}{'C_s(F)':>12}{'C_s(G)':>12}{'C_s(G∘F)':>14}{'ratio C_s(G∘F)/C_s(G)':>24}")
for d, r in table.items():
    ratio = r["G∘F"]["C_s"].value / r["G"]["C_s"].value
    print(f"{d:>4}{float(r['F']['C_s'].value):12.4g}{float(r['G']['C_s'].value):12.4g}"
          f"{float(r['G∘F']['C_s'].value):14.4g}{float(ratio):24,.0f}   (d^5 = {d**5:,})")
""")
code("""
fig, ax = plt.subplots(figsize=(6, 4))
for part, style in [("F", "o-"), ("G", "s-"), ("G∘F", "^-")]:
    ax.loglog(ds, [float(table[d][part]["C_s"].value) for d in ds], style, label=f"$\\\\mathfrak{{C}}_s$({part})")
ax.set_xlabel("input dimension d")
ax.set_ylabel("sample complexity measure")
ax.set_title("Composition blows up complexity ([AL] §2.1)")
ax.legend()
plt.show()
""", tags=["nbval-ignore-output"])
md(r"""
## Try this

1. Change `alpha` and `beta` in `rl.parity_instance(alpha=..., beta=...)` and predict `reference_errors()` before running it.
2. Why does the threshold not depend on $\beta$? What does $\beta$ change?
3. Compute `rl.complexity_s("sin", R=r)` for a few radii and compare with $C^*(r\cosh r + \sinh r)$.
4. The §7 hard instance `rl.hard_instance(d=30, k=6)`: what is the degree of $G(F(x))$ as a parity of $x$, and how does $\mathfrak C_s(F)$ grow with $d$?
""")

nb.cells = cells
nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nb.metadata["language_info"] = {"name": "python"}
nbf.write(nb, "notebooks/00_welcome.ipynb")
