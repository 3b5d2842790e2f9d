"""A training loop as a PyTorch user expects it: :func:`fit` and the :class:`Trainer` behind it.

Each batch is ``(input, ..., target)``: the model is called as ``model(*inputs)`` and the loss
as ``loss_fn(output, target)`` (e.g. ``nn.CrossEntropyLoss()``). The forward and backward pass
run as one ``funcgrad_nn.jit``-compiled function (``jit=False`` runs them eagerly); the
optimizer then updates the parameters in place. Options:

* ``metrics``: ``{"acc": accuracy}`` or names (``"accuracy"``); each is
  ``metric(output, target) -> float`` averaged over samples, for training and validation;
* a ``tqdm`` progress bar with loss, the first metric and samples/s (``progress=None`` shows it
  on a terminal or in a Jupyter notebook; ``False`` is quiet);
* ``scheduler`` stepped every epoch (``scheduler_interval="step"``: every optimizer step;
  ``ReduceLROnPlateau`` gets the monitored loss);
* ``grad_accumulation=k`` averages the gradients of ``k`` batches per optimizer step;
  ``clip_grad_norm``/``clip_grad_value`` clip them as ``torch.nn.utils.clip_grad_norm_``/
  ``clip_grad_value_`` (``funcgrad_nn.utils``);
* callbacks (:class:`EarlyStopping`, or any object with some of ``on_train_begin``,
  ``on_epoch_end``, ``on_train_end`` taking ``(trainer, ...)``);
* ``checkpoint_dir``: an atomic ``checkpoint.safetensors`` every ``checkpoint_every`` epochs
  with the model, optimizer, scheduler, callback, history and RNG states; ``resume=True``
  continues from it bit-identically (the same losses as an uninterrupted run);
  ``history.csv``/``history.json`` and, with matplotlib installed, ``curves.png`` beside it;
* a sampler with ``set_epoch`` (:class:`~funcgrad_nn.data.DistributedSampler`) is told the
  epoch (counted from 0) before each one, as Lightning does, so every epoch reshuffles;
* ``device``: where each batch is moved before the step (default: the device of the model's
  parameters, so ``model.to("cuda")`` is all a GPU run needs, as in Lightning).

>>> import numpy as np, funcgrad_nn as nn
>>> _ = nn.manual_seed(0)
>>> x = np.random.default_rng(0).normal(size=(64, 2)).astype(np.float32)
>>> y = (x[:, 0] > 0).astype(np.int64)
>>> loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=16, shuffle=True, seed=0)
>>> model = nn.Linear(2, 2)
>>> opt = nn.optim.SGD(model.parameters(), lr=0.5)
>>> history = fit(model, nn.CrossEntropyLoss(), opt, loader, epochs=5, metrics=["accuracy"],
...               progress=False)
>>> len(history), history[-1]["accuracy"] > 0.9, history["loss"][-1] < history["loss"][0]
(5, True, True)
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import funcgrad
from funcgrad import tree_util
from funcgrad.backend import canonical_device, device_of, is_array
from funcgrad.errors import DeviceMismatchError
from funcgrad_nn import init as _init
from funcgrad_nn.module import Module
from funcgrad_nn.serialization import load, save
from funcgrad_nn.transforms import carry_no_grad
from funcgrad_nn.transforms import jit as _nn_jit
from funcgrad_nn.transforms import value_and_grad as _nn_value_and_grad
from funcgrad_nn.utils.clip_grad import clip_grads_by_norm

__all__ = ["fit", "Trainer", "History", "EarlyStopping", "Callback", "accuracy",
           "plot_history"]

_CHECKPOINT_FORMAT = "funcgrad_nn.train/1"
CHECKPOINT_NAME = "checkpoint.safetensors"


# -- metrics and gradient clipping -------------------------------------------------------------

def accuracy(output: Any, target: Any) -> float:
    """Fraction of predictions whose arg-max class equals ``target`` (class indices, or
    one-hot / probability rows), as torchmetrics' multiclass accuracy: the classes lie on
    axis 1, as PyTorch's losses want them (``(N, C)``, or ``(N, C, d1, ...)`` with targets
    ``(N, d1, ...)``: segmentation, tagging), or on the last axis when the targets' shape
    says so (``(N, T, C)`` against ``(N, T)``). A binary output (one score per target:
    ``(N,)``, ``(N, 1)``, ``(N, 1, H, W)``, ...) is thresholded as torchmetrics' binary
    accuracy does: logits (any value outside [0, 1]) at 0, probabilities at 0.5, against
    targets above 0.5.

    >>> import numpy as np
    >>> accuracy(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array([1, 1]))
    0.5
    >>> accuracy(np.array([[2.0], [-1.0], [0.5]]), np.array([[1.0], [0.0], [0.0]]))  # logits
    0.6666666666666666
    >>> scores = np.zeros((1, 3, 2, 2)); scores[0, 2, 0] = 1.0      # (N, C, H, W)
    >>> accuracy(scores, np.array([[[2, 2], [0, 1]]]))
    0.75
    """
    shape, want = tuple(output.shape), tuple(target.shape)
    binary = len(shape) == 1 or shape[1] == 1 or (shape[-1] == 1
                                                  and want != shape[:1] + shape[2:])
    if binary:
        scores, labels = output.reshape(-1), target.reshape(-1)
        if scores.shape != labels.shape:
            raise ValueError(f"accuracy: a binary output of shape {tuple(output.shape)} needs "
                             f"one target per row, got shape {tuple(target.shape)}")
        logits = bool(((scores < 0) | (scores > 1)).any())
        pred = scores > (0 if logits else 0.5)
        return float((pred == (labels > 0.5)).mean())
    if want == shape:  # one-hot or probabilities: classes on axis 1, as PyTorch's losses
        axis = 1
        target = target.argmax(axis)
    elif want == shape[:1] + shape[2:]:
        axis = 1
    elif want == shape[:-1]:
        axis = -1
    else:
        raise ValueError(f"accuracy: targets of shape {want} do not fit an output of shape "
                         f"{shape}: expected class indices of shape "
                         f"{shape[:1] + shape[2:]} (classes on axis 1) or the output's shape "
                         "(one-hot or probabilities)")
    return float((output.argmax(axis) == target).mean())


_NAMED_METRICS: dict[str, Callable[[Any, Any], float]] = {"accuracy": accuracy, "acc": accuracy}


def _metric_table(metrics: Any) -> dict[str, Callable[[Any, Any], float]]:
    if metrics is None:
        return {}
    if callable(metrics):
        metrics = [metrics]
    if isinstance(metrics, Mapping):
        items = list(metrics.items())
    else:
        items = []
        for m in metrics:
            if isinstance(m, str):
                if m not in _NAMED_METRICS:
                    raise ValueError(f"fit: unknown metric {m!r}; known: "
                                     f"{sorted(_NAMED_METRICS)}, or pass a function "
                                     "metric(output, target) -> float")
                items.append((m, _NAMED_METRICS[m]))
            elif callable(m):
                items.append((getattr(m, "__name__", type(m).__name__), m))
            else:
                raise TypeError(f"fit: a metric must be a name or a function, got {m!r}")
    for name, fn in items:
        if not callable(fn):
            raise TypeError(f"fit: metric {name!r} is not callable")
        if name in ("loss", "epoch", "lr", "time") or name.startswith("val_"):
            raise ValueError(f"fit: metric name {name!r} clashes with a history column")
    return dict(items)


# -- history ---------------------------------------------------------------------------------

class History(list):
    """Per-epoch rows (dicts: ``epoch``, ``loss``, metrics, ``val_*``, ``lr``, ``time``);
    ``history["loss"]`` is a column.

    >>> h = History([{"epoch": 1, "loss": 0.5}, {"epoch": 2, "loss": 0.25}])
    >>> h["loss"], h[-1]["epoch"]
    ([0.5, 0.25], 2)
    """

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            if not any(key in row for row in self):
                raise KeyError(f"no column {key!r} in the history (columns: {self.columns})")
            return [row.get(key) for row in self]
        return super().__getitem__(key)

    @property
    def columns(self) -> list[str]:
        """Column names in first-seen order."""
        cols: dict[str, None] = {}
        for row in self:
            cols.update(dict.fromkeys(row))
        return list(cols)

    def to_csv(self, path: str | os.PathLike) -> None:
        """Write the rows as CSV (atomically)."""
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(self)
        _atomic_write_text(path, buf.getvalue())

    def to_json(self, path: str | os.PathLike) -> None:
        """Write the rows as a JSON list (atomically); NumPy/device scalars and arrays a
        callback logged become numbers and nested lists."""
        _atomic_write_text(path, json.dumps(list(self), indent=1, default=_jsonable) + "\n")


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic) or is_array(value):
        return funcgrad.to_numpy(value).tolist()
    raise TypeError(f"History.to_json: cannot write a {type(value).__name__} ({value!r:.60})")


def _atomic_write_text(path: str | os.PathLike, text: str) -> None:
    path = os.fspath(path)
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def plot_history(history: Sequence[Mapping[str, Any]], path: str | os.PathLike) -> bool:
    """Write loss and metric curves (training and validation) as a PNG; returns False (and
    writes nothing) when matplotlib is not installed (``pip install "funcgrad[plot]"``).

    >>> import os, tempfile
    >>> ok = plot_history([{"epoch": 1, "loss": 1.0}, {"epoch": 2, "loss": 0.5}],
    ...                   os.path.join(tempfile.mkdtemp(), "curves.png"))
    >>> ok in (True, False)
    True
    """
    try:
        import matplotlib
        matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    history = History(history)
    names = [c for c in history.columns
             if c not in ("epoch", "lr", "time") and not c.startswith("val_")]
    fig, axes = plt.subplots(1, len(names), figsize=(4.5 * len(names), 3.5), squeeze=False)
    epochs = history["epoch"]
    for ax, name in zip(axes[0], names):
        ax.plot(epochs, history[name], marker="o", label="train")
        if f"val_{name}" in history.columns:
            ax.plot(epochs, history[f"val_{name}"], marker="o", label="validation")
        ax.set_xlabel("epoch")
        ax.set_title(name)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.fspath(path), dpi=100)
    plt.close(fig)
    return True


# -- callbacks -------------------------------------------------------------------------------

class Callback:
    """Base class for callbacks; override any of the hooks. Optional ``state_dict``/
    ``load_state_dict`` make a callback's state part of checkpoints."""

    def on_train_begin(self, trainer: Trainer) -> None:
        """Called once before the first epoch (also when resuming)."""

    def on_epoch_end(self, trainer: Trainer, epoch: int, logs: dict[str, Any]) -> None:
        """Called after each epoch with that epoch's history row."""

    def on_train_end(self, trainer: Trainer) -> None:
        """Called once after the last epoch."""


class EarlyStopping(Callback):
    """Stop when ``monitor`` has not improved by more than ``min_delta`` for ``patience``
    epochs (Keras/Lightning semantics); ``restore_best_weights`` puts the best epoch's
    parameters back at the end.

    >>> es = EarlyStopping(monitor="loss", patience=1)
    >>> class T: stop_training = False; model = None
    >>> t = T()
    >>> for e, loss in enumerate([1.0, 0.5, 0.6, 0.7], 1):
    ...     es.on_epoch_end(t, e, {"loss": loss})
    ...     if t.stop_training: break
    >>> t.stop_training, es.best, es.stopped_epoch
    (True, 0.5, 3)
    """

    def __init__(self, monitor: str = "val_loss", patience: int = 5, mode: str = "min",
                 min_delta: float = 0.0, restore_best_weights: bool = False) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"EarlyStopping: mode must be 'min' or 'max', got {mode!r}")
        if patience < 0 or min_delta < 0:
            raise ValueError("EarlyStopping: patience and min_delta must be >= 0")
        self.monitor, self.patience, self.mode = monitor, patience, mode
        self.min_delta, self.restore_best_weights = min_delta, restore_best_weights
        self.best: float | None = None
        self.wait = 0
        self.stopped_epoch = 0
        self.best_state: Any = None

    def _improved(self, value: float) -> bool:
        if self.best is None:
            return not math.isnan(value)
        if self.mode == "min":
            return value < self.best - self.min_delta
        return value > self.best + self.min_delta

    def on_epoch_end(self, trainer: Any, epoch: int, logs: dict[str, Any]) -> None:  # noqa: D102
        if self.monitor not in logs:
            raise KeyError(f"EarlyStopping: monitored value {self.monitor!r} is not in the "
                           f"history (available: {sorted(logs)}); pass val_loader= for val_*")
        value = float(logs[self.monitor])
        if self._improved(value):
            self.best, self.wait = value, 0
            if self.restore_best_weights and trainer.model is not None:
                self.best_state = trainer.model.state_dict()
        else:
            self.wait += 1
            if self.wait >= self.patience:
                trainer.stop_training = True
                self.stopped_epoch = epoch

    def on_train_end(self, trainer: Any) -> None:  # noqa: D102
        if self.restore_best_weights and self.best_state is not None:
            trainer.model.load_state_dict(self.best_state)

    def state_dict(self) -> dict[str, Any]:  # noqa: D102
        return {"best": self.best, "wait": self.wait, "stopped_epoch": self.stopped_epoch,
                "best_state": self.best_state}

    def load_state_dict(self, state: dict[str, Any]) -> None:  # noqa: D102
        self.best, self.wait = state["best"], state["wait"]
        self.stopped_epoch, self.best_state = state["stopped_epoch"], state["best_state"]


# -- the trainer -----------------------------------------------------------------------------

def _as_float(value: Any) -> float:
    """A loss or metric as a Python float: a one-element array of any shape (a ``(1,)``-shaped
    mean, which ``loss.backward()`` takes) too, where NumPy's ``float()`` wants a 0-d one."""
    shape = tuple(getattr(value, "shape", ()))
    if shape and all(d == 1 for d in shape):
        value = value.reshape(())
    return float(value)


def _split_batch(batch: Any) -> tuple[tuple[Any, ...], Any]:
    if isinstance(batch, (tuple, list)) and len(batch) >= 2:
        return tuple(batch[:-1]), batch[-1]
    raise TypeError("fit: each batch must be a tuple/list (input, ..., target), got "
                    f"{type(batch).__name__}" + (f" of length {len(batch)}"
                                                 if isinstance(batch, (tuple, list)) else ""))


def _batch_size(target: Any) -> int:
    leaves = tree_util.tree_leaves(target)
    shape = getattr(leaves[0], "shape", ()) if leaves else ()
    return int(shape[0]) if shape else 1


def _generators(loader: Any) -> list[np.random.Generator]:
    """The numpy generators a loader shuffles with (its own, its samplers'), deduplicated."""
    found: list[np.random.Generator] = []
    batch_sampler = getattr(loader, "batch_sampler", None)
    for owner in (loader, getattr(loader, "sampler", None), batch_sampler,
                  getattr(batch_sampler, "sampler", None)):
        g = getattr(owner, "generator", None)
        if isinstance(g, np.random.Generator) and all(g is not f for f in found):
            found.append(g)
    return found


def _interactive() -> bool:
    """Whether someone watches the output: a terminal, or a Jupyter notebook (whose stderr is
    no terminal, yet Keras and Lightning show their bars there; tqdm.auto draws a widget)."""
    if getattr(sys.stderr, "isatty", lambda: False)():
        return True
    if "IPython" not in sys.modules:  # not running under IPython: nothing to import
        return False
    from IPython import get_ipython

    return type(get_ipython()).__name__ == "ZMQInteractiveShell"


def _set_sampler_epoch(loader: Any, epoch: int) -> None:
    """Call ``set_epoch(epoch)`` on the loader's samplers that have it (a
    :class:`~funcgrad_nn.data.DistributedSampler` reshuffles only when told the epoch), as
    Lightning does; forgetting it is the classic bug of a hand-written loop: the same shard
    order every epoch."""
    owners = [getattr(loader, "sampler", None)]
    batch_sampler = getattr(loader, "batch_sampler", None)
    owners += [batch_sampler, getattr(batch_sampler, "sampler", None)]
    seen: list[Any] = []
    for owner in owners:
        set_epoch = getattr(owner, "set_epoch", None)
        if callable(set_epoch) and all(owner is not o for o in seen):
            seen.append(owner)
            set_epoch(epoch)


def _plain_state(state: dict[str, Any]) -> dict[str, Any]:
    # Scheduler state may hold user functions (LambdaLR's lambdas); PyTorch leaves them out.
    def storable(v: Any) -> bool:
        return not any(callable(leaf) and not hasattr(leaf, "dtype")
                       for leaf in tree_util.tree_leaves(v))
    return {k: v for k, v in state.items() if storable(v)}


class Trainer:
    """Owns the training configuration and state; :meth:`fit` runs epochs (see the module
    docstring for the options). ``trainer.stop_training = True`` (from a callback) ends
    training after the current epoch.

    >>> import numpy as np, funcgrad_nn as nn
    >>> _ = nn.manual_seed(0)
    >>> x = np.random.default_rng(1).normal(size=(32, 3)).astype(np.float32)
    >>> loader = nn.data.DataLoader(nn.data.TensorDataset(x, x.sum(1, keepdims=True)),
    ...                             batch_size=8)
    >>> model = nn.Linear(3, 1)
    >>> trainer = Trainer(model, nn.MSELoss(), nn.optim.Adam(model.parameters(), lr=0.1),
    ...                   progress=False)
    >>> h = trainer.fit(loader, epochs=20)
    >>> h["loss"][-1] < 0.1 * h["loss"][0], trainer.epoch
    (True, 20)
    """

    def __init__(self, model: Module, loss_fn: Callable[[Any, Any], Any], optimizer: Any, *,
                 scheduler: Any = None, scheduler_interval: str = "epoch", metrics: Any = None,
                 callbacks: Iterable[Any] = (), checkpoint_dir: str | os.PathLike | None = None,
                 checkpoint_every: int = 1, log_dir: str | os.PathLike | None = None,
                 grad_accumulation: int = 1, clip_grad_norm: float | None = None,
                 clip_grad_value: float | None = None, jit: bool = True,
                 progress: bool | None = None, plot: bool = True,
                 device: str | None = None) -> None:
        if not isinstance(model, Module):
            raise TypeError(f"Trainer: model must be a funcgrad_nn.Module, got "
                            f"{type(model).__name__}")
        if not callable(loss_fn):
            raise TypeError("Trainer: loss_fn must be callable as loss_fn(output, target)")
        if not hasattr(optimizer, "step") or not hasattr(optimizer, "state_dict"):
            raise TypeError("Trainer: optimizer must be a funcgrad_nn.optim optimizer, got "
                            f"{type(optimizer).__name__}")
        if scheduler_interval not in ("epoch", "step"):
            raise ValueError("Trainer: scheduler_interval must be 'epoch' or 'step', got "
                             f"{scheduler_interval!r}")
        for name, v in (("grad_accumulation", grad_accumulation),
                        ("checkpoint_every", checkpoint_every)):
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"Trainer: {name} must be a positive int, got {v!r}")
        for name, v in (("clip_grad_norm", clip_grad_norm), ("clip_grad_value", clip_grad_value)):
            if v is not None and not v > 0:
                raise ValueError(f"Trainer: {name} must be positive, got {v!r}")
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.scheduler, self.scheduler_interval = scheduler, scheduler_interval
        self.metrics = _metric_table(metrics)
        self.callbacks = list(callbacks)
        self.checkpoint_dir = None if checkpoint_dir is None else os.fspath(checkpoint_dir)
        self.log_dir = os.fspath(log_dir) if log_dir is not None else self.checkpoint_dir
        self.checkpoint_every = checkpoint_every
        self.grad_accumulation = grad_accumulation
        self.clip_grad_norm, self.clip_grad_value = clip_grad_norm, clip_grad_value
        self.progress, self.plot = progress, plot
        self.device = None if device is None else canonical_device(device)
        self.history = History()
        self.epoch = 0  # completed epochs
        self.global_step = 0  # optimizer steps taken
        self.stop_training = False
        self._loaders: list[Any] = []

        def forward_loss(m: Module, inputs: tuple[Any, ...], target: Any) -> Any:
            output = m(*inputs)
            return loss_fn(output, target), output

        def forward(m: Module, inputs: tuple[Any, ...]) -> Any:
            return m(*inputs)

        step = _nn_value_and_grad(forward_loss, has_aux=True)
        self._train_step = _nn_jit(step) if jit else step
        self._eval_step = _nn_jit(forward) if jit else forward

    # -- one pass -------------------------------------------------------------------------

    def _show_progress(self) -> bool:
        if self.progress is None:
            return _interactive()
        return bool(self.progress)

    def _on_device(self, batch: Any) -> Any:
        # As Lightning does: host batches follow the model to its device (a CuPy model
        # would otherwise meet NumPy inputs, which CuPy refuses to mix).
        device = self.device
        first = next(iter(self.model.parameters()), None)
        model_device = device_of(first) if first is not None else None
        if device is None:
            device = model_device
        elif model_device is not None and model_device != device:
            # Host batches would silently follow the model's device (they are uncommitted,
            # as in JAX): an explicit device that is not the model's is a mistake to name.
            raise DeviceMismatchError(
                f"Trainer(device={device!r}): the model's parameters are on "
                f"{model_device!r}, so batches and model would be on different devices; move "
                f"the model with model.to({device!r}) or leave device= out")
        if device is None or device == "cpu":
            return batch

        def put(v: Any) -> Any:
            return funcgrad.device_put(v, device) if is_array(v) else v

        return tree_util.tree_map(put, batch)

    def _apply(self, grads: Any) -> None:
        # carry_no_grad: parameters the loss did not reach keep no gradient (skipped by the
        # optimizer, as PyTorch's .grad None) through clipping
        if self.clip_grad_value is not None:  # pure form: jit outputs may share memory
            v = self.clip_grad_value
            grads = carry_no_grad([grads], tree_util.tree_map(
                lambda g: None if g is None else g.clip(-v, v), grads))
        if self.clip_grad_norm is not None:
            grads = carry_no_grad([grads], clip_grads_by_norm(grads, self.clip_grad_norm)[0])
        self.optimizer.step(grads)
        self.global_step += 1
        if self.scheduler is not None and self.scheduler_interval == "step":
            self.scheduler.step()

    def _train_epoch(self, loader: Any, epochs: int) -> dict[str, float]:
        from tqdm.auto import tqdm

        self.model.train()
        try:  # a DataLoader over an IterableDataset without __len__ raises TypeError
            total: int | None = len(loader)
        except TypeError:
            total = None
        sums = dict.fromkeys(["loss", *self.metrics], 0.0)
        seen, start = 0, time.perf_counter()
        pending, n_pending = None, 0
        bar = tqdm(total=total, desc=f"epoch {self.epoch + 1}/{epochs}", unit="batch",
                   disable=not self._show_progress(), leave=True, dynamic_ncols=True,
                   file=sys.stderr)
        try:
            for batch in loader:
                inputs, target = self._on_device(_split_batch(batch))
                (loss, output), grads = self._train_step(self.model, inputs, target)
                loss_value = _as_float(loss)
                if not math.isfinite(loss_value):
                    raise FloatingPointError(
                        f"fit: the loss became {loss_value} at epoch {self.epoch + 1}, step "
                        f"{self.global_step}; lower the learning rate or clip gradients")
                pending = grads if pending is None else carry_no_grad(
                    [pending, grads], tree_util.tree_map(lambda a, b: a + b, pending, grads))
                n_pending += 1
                if n_pending == self.grad_accumulation:
                    self._apply(self._averaged(pending, n_pending))
                    pending, n_pending = None, 0
                n = _batch_size(target)
                seen += n
                sums["loss"] += loss_value * n
                for name, fn in self.metrics.items():
                    sums[name] += _as_float(fn(output, target)) * n
                postfix = {"loss": f"{sums['loss'] / seen:.4f}"}
                if self.metrics:
                    first = next(iter(self.metrics))
                    postfix[first] = f"{sums[first] / seen:.4f}"
                postfix["samples/s"] = f"{seen / max(time.perf_counter() - start, 1e-9):.0f}"
                bar.set_postfix(postfix, refresh=False)
                bar.update(1)
            if n_pending:  # the epoch's last, shorter accumulation group
                self._apply(self._averaged(pending, n_pending))
        finally:
            bar.close()
        if seen == 0:
            raise ValueError("fit: the training loader yielded no batches")
        return {k: v / seen for k, v in sums.items()}

    @staticmethod
    def _averaged(grads: Any, n: int) -> Any:
        if n == 1:
            return grads
        return carry_no_grad([grads], tree_util.tree_map(
            lambda g: None if g is None else g / g.dtype.type(n), grads))

    def evaluate(self, loader: Iterable[Any]) -> dict[str, float]:
        """Mean loss and metrics over ``loader`` in eval mode (no parameter updates).

        >>> import numpy as np, funcgrad_nn as nn
        >>> m = nn.Linear(1, 1); m.weight[...] = 1; m.bias[...] = 0
        >>> t = Trainer(m, nn.MSELoss(), nn.optim.SGD(m.parameters(), lr=0.1), progress=False)
        >>> t.evaluate([(np.ones((2, 1), np.float32), np.zeros((2, 1), np.float32))])
        {'loss': 1.0}
        """
        was_training = self.model.training
        self.model.eval()
        sums = dict.fromkeys(["loss", *self.metrics], 0.0)
        seen = 0
        try:
            for batch in loader:
                inputs, target = self._on_device(_split_batch(batch))
                output = self._eval_step(self.model, inputs)
                n = _batch_size(target)
                seen += n
                sums["loss"] += _as_float(self.loss_fn(output, target)) * n
                for name, fn in self.metrics.items():
                    sums[name] += _as_float(fn(output, target)) * n
        finally:
            self.model.train(was_training)
        if seen == 0:
            raise ValueError("evaluate: the loader yielded no batches")
        return {k: v / seen for k, v in sums.items()}

    # -- checkpoints ----------------------------------------------------------------------

    def _loaders_generators(self) -> list[np.random.Generator]:
        return [g for loader in self._loaders for g in _generators(loader)]

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue training exactly (model, optimizer, scheduler,
        callbacks, history, counters and the RNG states of the loaders and of ``nn.init``)."""
        persistent = set(self.model.state_dict(keep_vars=True))
        return {
            "format": _CHECKPOINT_FORMAT,
            "epoch": self.epoch,
            "global_step": self.global_step,
            "model": self.model.state_dict(),
            "buffers": {k: funcgrad.to_numpy(v).copy() for k, v in self.model.named_buffers()
                        if k not in persistent},
            "optimizer": self.optimizer.state_dict(),
            "scheduler": None if self.scheduler is None else _plain_state(
                self.scheduler.state_dict()),
            "callbacks": [cb.state_dict() if hasattr(cb, "state_dict") else None
                          for cb in self.callbacks],
            "history": list(self.history),
            "rng": {"init": _init.default_generator().bit_generator.state,
                    "loaders": [g.bit_generator.state for g in self._loaders_generators()],
                    # what a dataset's augmentations draw in the main process (num_workers=0)
                    "python": random.getstate(), "numpy": np.random.get_state(),
                    # persistent workers keep the base seed they started with
                    "worker_seeds": [getattr(loader, "_workers_base_seed", None)
                                     for loader in self._loaders]},
        }

    def load_state_dict(self, state: Mapping[str, Any], *, where: str = "the state") -> None:
        """Restore :meth:`state_dict` (raises a clear error for another model's checkpoint)."""
        if not isinstance(state, Mapping) or state.get("format") != _CHECKPOINT_FORMAT:
            raise ValueError(f"Trainer: {where} is not a Trainer checkpoint (a plain state dict? "
                             "load it with model.load_state_dict(nn.load(path)))")
        try:
            self.model.load_state_dict(state["model"])
        except RuntimeError as e:
            raise RuntimeError(f"Trainer: {where} was written by another model:\n{e}") from None
        buffers = dict(self.model.named_buffers())
        for k, v in state["buffers"].items():
            if k in buffers:
                buffers[k][...] = funcgrad.device_put(v, device_of(buffers[k]) or "cpu")
        self.optimizer.load_state_dict(state["optimizer"])
        if self.scheduler is not None and state["scheduler"] is not None:
            self.scheduler.load_state_dict(state["scheduler"])
        for cb, cb_state in zip(self.callbacks, state["callbacks"]):
            if cb_state is not None and hasattr(cb, "load_state_dict"):
                cb.load_state_dict(cb_state)
        self.history = History(state["history"])
        self.epoch, self.global_step = int(state["epoch"]), int(state["global_step"])
        _init.default_generator().bit_generator.state = state["rng"]["init"]
        gens = self._loaders_generators()
        if len(gens) != len(state["rng"]["loaders"]):
            warnings.warn(f"Trainer: {where} holds {len(state['rng']['loaders'])} loader RNG "
                          f"states but the loaders have {len(gens)}; shuffling will differ "
                          "from an uninterrupted run", stacklevel=3)
        for g, s in zip(gens, state["rng"]["loaders"]):
            g.bit_generator.state = s
        if "python" in state["rng"]:  # checkpoints of before these were kept lack them
            random.setstate(state["rng"]["python"])
            np.random.set_state(state["rng"]["numpy"])
        for loader, seed in zip(self._loaders, state["rng"].get("worker_seeds", ())):
            if seed is not None and getattr(loader, "persistent_workers", False):
                loader._resume_base_seed = int(seed)

    def checkpoint_path(self) -> str | None:
        """Where :meth:`fit` writes (and resumes from) the checkpoint."""
        if self.checkpoint_dir is None:
            return None
        return os.path.join(self.checkpoint_dir, CHECKPOINT_NAME)

    def save_checkpoint(self, path: str | os.PathLike | None = None) -> str:
        """Write :meth:`state_dict` atomically (default: ``checkpoint_dir/checkpoint.safetensors``)."""
        path = os.fspath(path) if path is not None else self.checkpoint_path()
        if path is None:
            raise ValueError("save_checkpoint: pass a path or construct with checkpoint_dir=")
        save(self.state_dict(), path)
        return path

    def load_checkpoint(self, path: str | os.PathLike) -> None:
        """Restore a checkpoint written by :meth:`save_checkpoint`."""
        self.load_state_dict(load(path), where=repr(os.fspath(path)))

    # -- the loop -------------------------------------------------------------------------

    def fit(self, train_loader: Iterable[Any], epochs: int, val_loader: Iterable[Any] | None = None,
            *, resume: bool | str | os.PathLike = False) -> History:
        """Train until ``epochs`` epochs are complete (counting those of a resumed checkpoint);
        returns the :class:`History`."""
        if not isinstance(epochs, int) or isinstance(epochs, bool) or epochs < 0:
            raise ValueError(f"fit: epochs must be a non-negative int, got {epochs!r}")
        self._loaders = [train_loader] + ([val_loader] if val_loader is not None else [])
        if self.checkpoint_dir is not None:
            os.makedirs(self.checkpoint_dir, exist_ok=True)
        if self.log_dir is not None:
            os.makedirs(self.log_dir, exist_ok=True)
        if resume:
            path = self.checkpoint_path() if resume is True else os.fspath(resume)
            if path is None:
                raise ValueError("fit(resume=True) needs checkpoint_dir= (or resume=<path>)")
            if os.path.exists(path):
                self.load_checkpoint(path)
            elif resume is not True:
                raise FileNotFoundError(f"fit: no checkpoint to resume from at {path!r}")
        from funcgrad_nn.optim.lr_scheduler import ReduceLROnPlateau

        self.stop_training = False
        for cb in self.callbacks:
            getattr(cb, "on_train_begin", lambda t: None)(self)
        while self.epoch < epochs and not self.stop_training:
            start = time.perf_counter()
            lr = float(self.optimizer.param_groups[0]["lr"])
            logs: dict[str, Any] = {"epoch": self.epoch + 1}
            _set_sampler_epoch(train_loader, self.epoch)
            logs.update(self._train_epoch(train_loader, epochs))
            if val_loader is not None:
                logs.update({f"val_{k}": v for k, v in self.evaluate(val_loader).items()})
            logs["lr"] = lr
            logs["time"] = time.perf_counter() - start
            self.epoch += 1
            if self.scheduler is not None and isinstance(self.scheduler, ReduceLROnPlateau):
                self.scheduler.step(logs.get("val_loss", logs["loss"]))
            elif self.scheduler is not None and self.scheduler_interval == "epoch":
                self.scheduler.step()
            self.history.append(logs)
            for cb in self.callbacks:
                getattr(cb, "on_epoch_end", lambda t, e, lg: None)(self, self.epoch, logs)
            if self.log_dir is not None:
                self.history.to_csv(os.path.join(self.log_dir, "history.csv"))
                self.history.to_json(os.path.join(self.log_dir, "history.json"))
            if self.checkpoint_dir is not None and (
                    self.epoch % self.checkpoint_every == 0 or self.epoch == epochs
                    or self.stop_training):
                self.save_checkpoint()
        for cb in self.callbacks:
            getattr(cb, "on_train_end", lambda t: None)(self)
        if self.plot and self.log_dir is not None and self.history:
            plot_history(self.history, os.path.join(self.log_dir, "curves.png"))
        return self.history


def fit(model: Module, loss_fn: Callable[[Any, Any], Any], optimizer: Any,
        train_loader: Iterable[Any], epochs: int = 1, val_loader: Iterable[Any] | None = None,
        scheduler: Any = None, metrics: Any = None, callbacks: Iterable[Any] = (),
        checkpoint_dir: str | os.PathLike | None = None, resume: bool | str = False,
        **options: Any) -> History:
    """Train ``model`` for ``epochs`` epochs; ``options`` go to :class:`Trainer`
    (``jit``, ``progress``, ``grad_accumulation``, ``clip_grad_norm``, ``clip_grad_value``,
    ``scheduler_interval``, ``checkpoint_every``, ``log_dir``, ``plot``). Returns the
    :class:`History` (see the module docstring for an example)."""
    trainer = Trainer(model, loss_fn, optimizer, scheduler=scheduler, metrics=metrics,
                      callbacks=callbacks, checkpoint_dir=checkpoint_dir, **options)
    return trainer.fit(train_loader, epochs, val_loader, resume=resume)
