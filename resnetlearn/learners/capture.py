"""One epoch of SGD for many small models, recorded once as a CUDA graph and replayed.

For the widths of arXiv v3 §8.1 a GPU spends its time launching kernels and running Python, not
multiplying matrices: an SGD step of 28 models at m = 200 is ~40 small kernels. A CUDA graph records
the kernels of a whole epoch (the mini-batch gather, every step's forward, backward and momentum update)
once, and each later epoch is one launch. Only the inputs that change between epochs live in *static*
tensors that are refilled in place before each replay: the mini-batch order and the learning rate (the
§8.1 drop at half-time). The parameters, momentum buffers and the divergence mask are the engine's own
tensors, updated in place by the graph, so the engine's evaluation, divergence handling and results
read them as usual.

The recorded kernels are the eager engine's (:meth:`resnetlearn.learners.engine.State.step`), so a replayed
epoch is meant to give the same numbers as an eager one on the same GPU; ``gpu/gpu_check.py``
checks that equality on a real GPU for every mode. On the CPU and MPS there is nothing to record and the
engine runs eagerly. Constructed with ``record=False`` (any device), the same static-buffer epoch runs
eagerly: the test suite uses that to check the bookkeeping (warm-up restored, buffers refilled) against
the eager engine without a GPU.
"""

from __future__ import annotations

import torch

WARMUP_EPOCHS = 2
"""Epochs run on a side stream before recording (cuBLAS handles and the allocator settle); undone afterwards."""


class CapturedEpochs:
    """Replays one epoch of ``state``'s SGD steps on the fixed data ``x``, ``y`` (one per training phase).

    Use it in place of ``state.epoch``: ``runner.epoch(x, y, epoch, cancel)``. Cancellation is checked
    between epochs by the caller (an epoch is one replay), not during the recording (two warm-up epochs and
    the capture); ``x``/``y`` must be the tensors it was built with.
    """

    def __init__(self, state, x: torch.Tensor, y: torch.Tensor, *, record: bool = True):
        if record and x.device.type != "cuda":
            raise ValueError(f"recording a CUDA graph needs CUDA tensors; x is on {x.device.type}")
        self.state, self.x, self.y = state, x, y
        G, N = state.G, x.shape[0]
        self.perm = torch.arange(N, device=x.device).expand(G, N).contiguous()
        self.lr = state.lr0.clone()
        self.graph = None
        if record:
            self._record()

    def _body(self):
        """The eager engine's epoch (``State.epoch``) on the static order and learning rate."""
        st, x, y = self.state, self.x, self.y
        N, B = x.shape[0], st.protocol.batch_size
        xe = x[self.perm]
        ye = y[self.perm] if y.ndim == 2 else torch.gather(y, 1, self.perm.unsqueeze(-1).expand(-1, -1, y.shape[-1]))
        for s in range(0, N, B):
            st.step(xe[:, s:s + B], ye[:, s:s + B], self.lr)

    def _record(self):
        st = self.state
        saved = [t.detach().clone() for t in (*st.trainable, *st.bufs, st.alive)]
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(WARMUP_EPOCHS):
                    self._body()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            # thread_local: another thread (a new live run while this one winds down) may allocate meanwhile
            with torch.cuda.graph(graph, capture_error_mode="thread_local"):
                self._body()
            self.graph = graph
        finally:  # the warm-up trained; whatever happened, the models start from where they were
            torch.cuda.synchronize()
            self._restore(saved)

    def _restore(self, saved):
        st = self.state
        with torch.no_grad():
            for t, v in zip((*st.trainable, *st.bufs, st.alive), saved):
                t.copy_(v)

    def epoch(self, x, y, epoch: int, cancel=None) -> None:
        """One epoch (a replay). ``cancel`` is not looked at here: a replay cannot stop mid-epoch, so
        :func:`resnetlearn.learners.training.train_models` checks it before every epoch."""
        if x is not self.x or y is not self.y:
            raise ValueError("a recorded epoch replays on the data it was recorded with; pass the same x and y")
        st = self.state
        perm = torch.stack([torch.randperm(x.shape[0], generator=g) for g in st.gens])
        if x.device.type == "cuda":
            perm = perm.pin_memory()
        self.perm.copy_(perm, non_blocking=x.device.type == "cuda")
        self.lr.copy_(st.lr_dropped if epoch >= st.drop_epoch else st.lr0)
        if self.graph is None:
            self._body()
        else:
            self.graph.replay()
