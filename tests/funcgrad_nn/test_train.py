"""funcgrad_nn.train: the Trainer/fit loop — history, metrics, bit-identical resume, gradient
accumulation and clipping, early stopping, progress bar, checkpoints and bad input."""

import csv
import io
import json
import random

import numpy as np
import pytest
from helpers import DEVICE, dev, host

import funcgrad_nn as nn
from funcgrad_nn.train import EarlyStopping, Trainer, accuracy, fit


def _data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = ((x[:, 0] > 0).astype(np.int64) + (x[:, 1] > 0)).astype(np.int64)
    return x, y


def _model(seed=0, dropout=True):
    nn.manual_seed(seed)
    layers = [nn.Linear(4, 16), nn.Tanh()]
    if dropout:
        layers.append(nn.Dropout(0.2))
    return nn.Sequential(*layers, nn.Linear(16, 3))


def _loader(x, y, seed=0, bs=16):
    return nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=bs, shuffle=True,
                              seed=seed)


def test_fit_learns_and_writes_the_history(tmp_path):
    x, y = _data()
    model = _model()
    opt = nn.optim.Adam(model.parameters(), lr=0.02)
    h = fit(model, nn.CrossEntropyLoss(), opt, _loader(x, y), epochs=8,
            val_loader=[(x, y)], metrics=["accuracy"], checkpoint_dir=tmp_path, progress=False)
    assert len(h) == 8 and h["epoch"] == list(range(1, 9))
    assert h.columns == ["epoch", "loss", "accuracy", "val_loss", "val_accuracy", "lr", "time"]
    assert h["loss"][-1] < 0.6 * h["loss"][0] and h["val_accuracy"][-1] > 0.8
    rows = list(csv.DictReader(open(tmp_path / "history.csv")))
    assert [float(r["loss"]) for r in rows] == pytest.approx(h["loss"])
    assert json.load(open(tmp_path / "history.json")) == json.loads(json.dumps(list(h)))
    assert (tmp_path / "checkpoint.safetensors").exists()
    with pytest.raises(KeyError, match="no column 'nope'"):
        h["nope"]


def _run(ckpt_dir, epochs, resume=False, init_seed=0):
    # Everything is rebuilt from scratch (a new process would do the same); resuming must
    # restore parameters, optimizer moments, scheduler, Dropout keys, loader shuffling and
    # the callbacks' state from the checkpoint.
    x, y = _data()
    model = _model(init_seed)
    opt = nn.optim.Adam(model.parameters(), lr=0.01)
    sched = nn.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    stopper = EarlyStopping(monitor="val_loss", patience=100)
    trainer = Trainer(model, nn.CrossEntropyLoss(), opt, scheduler=sched, metrics=["accuracy"],
                      callbacks=[stopper], checkpoint_dir=ckpt_dir, progress=False)
    h = trainer.fit(_loader(x, y, seed=123), epochs, val_loader=[(x[:32], y[:32])],
                    resume=resume)
    return h, model, opt, stopper


def test_resume_continues_bit_identically(tmp_path):
    full, m_full, opt_full, es_full = _run(tmp_path / "a", 5)
    _run(tmp_path / "b", 2)
    resumed, m_res, opt_res, es_res = _run(tmp_path / "b", 5, resume=True, init_seed=99)
    keys = ["loss", "accuracy", "val_loss", "lr"]
    assert [[r[k] for k in keys] for r in resumed] == [[r[k] for k in keys] for r in full]
    for a, b in zip(m_full.state_dict().values(), m_res.state_dict().values()):
        assert np.array_equal(a, b)
    assert np.array_equal(m_full[2].rng_key, m_res[2].rng_key)
    assert es_res.best == es_full.best
    assert opt_res.param_groups[0]["lr"] == opt_full.param_groups[0]["lr"]


class _Jitter(nn.data.Dataset):
    """Augments in the main process from NumPy's and Python's global RNGs."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        noise = np.float32(np.random.normal() * 0.1 + random.random() * 0.1)
        return self.x[i] + noise, self.y[i]


def _run_loader(ckpt_dir, epochs, make_loader, resume=False):
    x, y = _data(48)
    model = _model()
    opt = nn.optim.Adam(model.parameters(), lr=0.01)
    h = fit(model, nn.CrossEntropyLoss(), opt, make_loader(x, y), epochs,
            checkpoint_dir=ckpt_dir, resume=resume, progress=False)
    return h["loss"]


def test_resume_restores_global_rngs_of_main_process_augmentation(tmp_path):
    def make(x, y):
        return nn.data.DataLoader(_Jitter(x, y), batch_size=16, shuffle=True, seed=1)

    np.random.seed(0)
    random.seed(0)
    full = _run_loader(tmp_path / "a", 4, make)
    np.random.seed(0)
    random.seed(0)
    _run_loader(tmp_path / "b", 2, make)
    np.random.seed(5)  # a new process: other global states, which the checkpoint restores
    random.seed(5)
    assert _run_loader(tmp_path / "b", 4, make, resume=True) == full


def test_resume_with_persistent_workers_reshuffles_as_an_uninterrupted_run(tmp_path):
    # Their base seed is drawn once, when the workers start (as PyTorch): the resumed loader
    # starts its workers with the checkpoint's instead of drawing, so the shuffles line up.
    def make(x, y):
        return nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=16, shuffle=True,
                                  seed=1, num_workers=2, persistent_workers=True)

    full = _run_loader(tmp_path / "a", 4, make)
    _run_loader(tmp_path / "b", 2, make)
    assert _run_loader(tmp_path / "b", 4, make, resume=True) == full


def test_distributed_samplers_are_told_the_epoch(tmp_path):
    # torch.utils.data.DistributedSampler(range(8), num_replicas=2, rank=1, seed=0) after
    # set_epoch(e) for e = 0, 1, 2 (as Lightning calls it); resuming at epoch 2 continues.
    expected = [[0, 3, 5, 6], [4, 6, 3, 0], [4, 2, 5, 3]]
    x = np.arange(8, dtype=np.float32)[:, None]
    y = np.arange(8)

    def run(epochs, resume=False):
        seen = []

        def record(output, target):
            seen.append(host(target).tolist())
            return 0.0

        sampler = nn.data.DistributedSampler(range(8), num_replicas=2, rank=1, seed=0)
        loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=4, sampler=sampler)
        model = nn.Linear(1, 8)
        fit(model, nn.CrossEntropyLoss(), nn.optim.SGD(model.parameters(), lr=0.1), loader,
            epochs, metrics={"seen": record}, checkpoint_dir=tmp_path, resume=resume,
            progress=False)
        return seen

    assert run(3) == expected
    (tmp_path / "checkpoint.safetensors").unlink()
    assert run(2) == expected[:2]
    assert run(3, resume=True) == expected[2:]


def test_numpy_values_a_callback_logs_are_written_to_history_json(tmp_path):
    class LogF1:
        def on_epoch_end(self, trainer, epoch, logs):
            logs["f1"] = np.float32(0.5)
            logs["confusion"] = dev(np.eye(2))

    x, y = _data(32)
    m = _model(dropout=False)
    fit(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1), [(x, y)], epochs=1,
        callbacks=[LogF1()], log_dir=tmp_path, progress=False, plot=False)
    row = json.load(open(tmp_path / "history.json"))[0]
    assert row["f1"] == 0.5 and row["confusion"] == [[1.0, 0.0], [0.0, 1.0]]


def test_resume_from_another_models_checkpoint_is_a_clear_error(tmp_path):
    _run(tmp_path, 1)
    other = nn.Linear(4, 3)
    t = Trainer(other, nn.CrossEntropyLoss(), nn.optim.SGD(other.parameters(), lr=0.1),
                checkpoint_dir=tmp_path, progress=False)
    with pytest.raises(RuntimeError, match="written by another model"):
        t.fit([], 2, resume=True)
    nn.save(other.state_dict(), tmp_path / "plain.safetensors")
    with pytest.raises(ValueError, match="not a Trainer checkpoint"):
        t.load_checkpoint(tmp_path / "plain.safetensors")
    with pytest.raises(FileNotFoundError, match="no checkpoint to resume from"):
        t.fit([], 2, resume=tmp_path / "missing.safetensors")


def test_grad_accumulation_equals_one_big_batch():
    x, y = _data(32)
    a, b = _model(dropout=False), _model(dropout=False)
    fit(a, nn.CrossEntropyLoss(), nn.optim.SGD(a.parameters(), lr=0.5),
        [(x[:16], y[:16]), (x[16:], y[16:])], epochs=1, grad_accumulation=2, progress=False)
    fit(b, nn.CrossEntropyLoss(), nn.optim.SGD(b.parameters(), lr=0.5), [(x, y)], epochs=1,
        progress=False)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)


def test_a_one_element_loss_trains_as_the_scalar_one():
    # loss.backward() takes a (1,)-shaped loss; so does fit (float() of it failed in NumPy 2)
    x, y = _data(32)
    a, b = _model(dropout=False), _model(dropout=False)
    ce = nn.CrossEntropyLoss()
    ha = fit(a, lambda o, t: ce(o, t).reshape(1), nn.optim.SGD(a.parameters(), lr=0.5),
             [(x, y)], epochs=2, val_loader=[(x, y)], progress=False)
    hb = fit(b, ce, nn.optim.SGD(b.parameters(), lr=0.5), [(x, y)], epochs=2,
             val_loader=[(x, y)], progress=False)
    np.testing.assert_allclose(ha["loss"], hb["loss"], rtol=1e-6)
    np.testing.assert_allclose(ha["val_loss"], hb["val_loss"], rtol=1e-6)


def test_clipping_options():
    # A huge learning rate with clipping moves the weight by exactly lr * clip.
    batch = [dev((np.ones((1, 1), np.float32), np.full((1, 1), 100.0, np.float32)))]
    for option, expected in (("clip_grad_value", 0.5), ("clip_grad_norm", 2.0)):
        m = nn.Linear(1, 1, bias=False).to(DEVICE)
        m.weight[...] = 0.0
        fit(m, nn.MSELoss(), nn.optim.SGD(m.parameters(), lr=1.0), batch, epochs=1,
            progress=False, **{option: expected})
        assert float(host(m.weight)[0, 0]) == pytest.approx(expected, rel=1e-5), option


def test_early_stopping_stops_and_restores_the_best_weights():
    x, y = _data()
    model = _model(dropout=False)
    opt = nn.optim.SGD(model.parameters(), lr=0.0)  # nothing improves after epoch 1
    es = EarlyStopping(monitor="loss", patience=2, restore_best_weights=True)
    h = fit(model, nn.CrossEntropyLoss(), opt, [(x, y)], epochs=10, callbacks=[es],
            progress=False)
    assert len(h) == 3 and es.stopped_epoch == 3
    with pytest.raises(KeyError, match="'val_loss' is not in the history"):
        fit(model, nn.CrossEntropyLoss(), opt, [(x, y)], epochs=1,
            callbacks=[EarlyStopping()], progress=False)


def test_reduce_lr_on_plateau_and_step_interval_schedulers():
    x, y = _data(32)
    model = _model(dropout=False)
    opt = nn.optim.SGD(model.parameters(), lr=0.0)
    opt.param_groups[0]["lr"] = 0.1
    model2 = _model(dropout=False)
    opt2 = nn.optim.SGD(model2.parameters(), lr=0.0)
    plateau = nn.optim.lr_scheduler.ReduceLROnPlateau(opt2, patience=0, factor=0.5)
    for p in model2.parameters():
        p[...] = 0  # constant loss: a plateau every epoch
    fit(model2, nn.CrossEntropyLoss(), opt2, [(x, y)], epochs=3, scheduler=plateau,
        progress=False)
    assert opt2.param_groups[0]["lr"] == 0.0  # 0 * 0.5 stays 0; scheduler was stepped
    step_sched = nn.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    fit(model, nn.CrossEntropyLoss(), opt, [(x[:16], y[:16]), (x[16:], y[16:])], epochs=1,
        scheduler=step_sched, scheduler_interval="step", progress=False)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.1 * 0.25)


def test_jit_and_eager_steps_agree():
    x, y = _data(32)
    a, b = _model(dropout=False), _model(dropout=False)
    ha = fit(a, nn.CrossEntropyLoss(), nn.optim.Adam(a.parameters(), lr=0.01), [(x, y)] * 3,
             epochs=2, progress=False)
    hb = fit(b, nn.CrossEntropyLoss(), nn.optim.Adam(b.parameters(), lr=0.01), [(x, y)] * 3,
             epochs=2, progress=False, jit=False)
    np.testing.assert_allclose(ha["loss"], hb["loss"], rtol=1e-5)


def test_progress_bar_shows_loss_metric_and_throughput(monkeypatch):
    import sys
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf)
    x, y = _data(32)
    m = _model(dropout=False)
    fit(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1), [(x, y)], epochs=1,
        metrics={"acc": accuracy}, progress=True)
    out = buf.getvalue()
    assert "epoch 1/1" in out and "loss=" in out and "acc=" in out and "samples/s=" in out
    buf.truncate(0)
    fit(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1), [(x, y)], epochs=1)
    assert buf.getvalue() == ""  # not a terminal: quiet by default


def test_progress_bar_shows_by_default_in_a_notebook(monkeypatch):
    import sys
    import types

    class ZMQInteractiveShell:  # what get_ipython() returns in a Jupyter kernel
        pass

    monkeypatch.setitem(sys.modules, "IPython",
                        types.SimpleNamespace(get_ipython=ZMQInteractiveShell))
    x, y = _data(32)
    m = _model(dropout=False)
    trainer = Trainer(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1))
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert trainer._show_progress()
    monkeypatch.setitem(sys.modules, "IPython", types.SimpleNamespace(get_ipython=lambda: None))
    assert not trainer._show_progress()  # plain python, output piped


def test_accuracy_of_binary_outputs_thresholds_as_torchmetrics():
    # torchmetrics.functional.accuracy(task="binary"): logits -> sigmoid, then > 0.5
    logits = dev(np.array([[2.0], [-1.0], [0.3], [-0.2]], np.float32))
    target = dev(np.array([[1.0], [1.0], [0.0], [0.0]], np.float32))
    assert accuracy(logits, target) == 0.5  # argmax of one column would say 1.0
    assert accuracy(logits[:, 0], dev(np.array([1, 0, 1, 0]))) == 1.0
    probs = dev(np.array([0.9, 0.4, 0.6, 0.5]))
    assert accuracy(probs, dev(np.array([1, 0, 0, 0]))) == 0.75  # 0.5 is not above 0.5
    with pytest.raises(ValueError, match="one target per row"):
        accuracy(logits, dev(np.zeros(3)))


def test_accuracy_takes_classes_on_axis_1_as_pytorchs_losses():
    # Segmentation: (N, C, H, W) scores, (N, H, W) classes (it took the arg-max over W).
    rng = np.random.default_rng(0)
    scores = rng.normal(size=(2, 3, 4, 5))
    labels = rng.integers(0, 3, (2, 4, 5))
    expected = float((scores.argmax(1) == labels).mean())
    assert accuracy(dev(scores), dev(labels)) == expected
    one_hot = np.moveaxis(np.eye(3)[labels], -1, 1)  # probabilities: the output's shape
    assert accuracy(dev(scores), dev(one_hot)) == expected
    # (N, T, C) against (N, T): the targets' shape says the classes are last.
    tagged = rng.normal(size=(2, 4, 3))
    tags = rng.integers(0, 3, (2, 4))
    assert accuracy(dev(tagged), dev(tags)) == float((tagged.argmax(-1) == tags).mean())
    # A binary segmentation map (N, 1, H, W) is thresholded, not arg-maxed over W.
    logits = rng.normal(size=(2, 1, 4, 5))
    masks = (rng.random((2, 1, 4, 5)) > 0.5).astype(np.float32)
    assert accuracy(dev(logits), dev(masks)) == float(((logits > 0) == masks).mean())
    with pytest.raises(ValueError, match="do not fit an output"):
        accuracy(dev(scores), dev(labels[:, :3]))
    # fit reports it: a 1x1 convolution classifying every pixel.
    model = nn.Conv2d(2, 3, 1).to(DEVICE)
    x = dev(rng.normal(size=(4, 2, 4, 5)).astype(np.float32))
    y = dev(rng.integers(0, 3, (4, 4, 5)))
    h = fit(model, nn.CrossEntropyLoss(), nn.optim.SGD(model.parameters(), lr=0.0),
            [(x, y)], metrics=["accuracy"], progress=False)
    model.eval()
    assert h["accuracy"][0] == float((host(model(x)).argmax(1) == host(y)).mean())


class _Stream(nn.data.IterableDataset):
    """An iterable dataset without a length (a stream)."""

    def __iter__(self):
        x, y = _data(32)
        return iter(zip(x, y))


def test_fit_on_a_loader_without_length(monkeypatch):
    import sys
    buf = io.StringIO()
    monkeypatch.setattr(sys, "stderr", buf)
    loader = nn.data.DataLoader(_Stream(), batch_size=8)
    with pytest.raises(TypeError):
        len(loader)
    m = _model(dropout=False)
    h = fit(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1), loader, epochs=2,
            val_loader=loader, progress=True)
    assert len(h) == 2 and np.isfinite(h["val_loss"][-1]) and "epoch 2/2" in buf.getvalue()


def test_learning_curve_png_when_matplotlib_is_installed(tmp_path):
    pytest.importorskip("matplotlib")
    x, y = _data(32)
    m = _model(dropout=False)
    fit(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1), [(x, y)], epochs=2,
        val_loader=[(x, y)], metrics=["accuracy"], checkpoint_dir=tmp_path, progress=False)
    assert (tmp_path / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_bad_input_is_a_clear_error():
    m = _model(dropout=False)
    opt = nn.optim.SGD(m.parameters(), lr=0.1)
    loss = nn.CrossEntropyLoss()
    with pytest.raises(TypeError, match="model must be a funcgrad_nn.Module"):
        Trainer(lambda x: x, loss, opt)
    with pytest.raises(TypeError, match="optimizer"):
        Trainer(m, loss, object())
    with pytest.raises(ValueError, match="grad_accumulation must be a positive int"):
        Trainer(m, loss, opt, grad_accumulation=0)
    with pytest.raises(ValueError, match="scheduler_interval"):
        Trainer(m, loss, opt, scheduler_interval="batch")
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        Trainer(m, loss, opt, metrics=["f1"])
    with pytest.raises(ValueError, match="epochs must be a non-negative int"):
        fit(m, loss, opt, [], epochs=-1)
    with pytest.raises(TypeError, match=r"\(input, ..., target\)"):
        fit(m, loss, opt, [np.ones((2, 4), np.float32)], epochs=1, progress=False)
    with pytest.raises(ValueError, match="yielded no batches"):
        fit(m, loss, opt, [], epochs=1, progress=False)
    x, y = _data(16)
    big = nn.optim.SGD(m.parameters(), lr=1e30)
    with pytest.raises(FloatingPointError, match="the loss became"), np.errstate(all="ignore"):
        fit(m, nn.MSELoss(), big, [(x, x[:, :3] * 1e20)] * 4, epochs=3, progress=False)


def test_host_batches_follow_the_model_to_its_device():
    # model.to(device) is all a device run needs: NumPy batches are moved before each step
    # (the strict device, like CuPy, refuses to mix with host arrays).
    x, y = _data(32)
    model = _model(dropout=False).to("strict")
    loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=8)
    trainer = Trainer(model, nn.CrossEntropyLoss(), nn.optim.SGD(model.parameters(), lr=0.1),
                      metrics=["accuracy"], progress=False)
    history = trainer.fit(loader, epochs=2, val_loader=loader)
    assert history["loss"][-1] < history["loss"][0]
    assert "strict" in type(next(iter(model.parameters()))).__module__
    # an explicit device that is not the model's is a clear error
    with pytest.raises(Exception, match="different devices"):
        Trainer(model, nn.CrossEntropyLoss(), nn.optim.SGD(model.parameters(), lr=0.1),
                progress=False, device="cpu").fit(loader, epochs=1)


class _PackedLSTM(nn.Module):
    """A ported PyTorch model packing its variable-length batch inside forward."""

    def __init__(self, pack):
        super().__init__()
        self.pack = pack
        self.rnn, self.fc = nn.LSTM(3, 4, batch_first=True), nn.Linear(4, 2)

    def forward(self, x, lens):
        if self.pack:
            x = nn.utils.rnn.pack_padded_sequence(x, lens, batch_first=True,
                                                  enforce_sorted=False)
            _, (h, _) = self.rnn(x)
        else:
            _, (h, _) = self.rnn(x, lengths=lens)
        return self.fc(h[-1])


def test_packing_inside_a_jitted_trainer_step_names_both_ways_out():
    # Trainer compiles the step by default, so the lengths batch is traced and cannot fix
    # the packed shapes: the error names Trainer(jit=False) and the layer's lengths=.
    x = np.random.default_rng(0).normal(size=(4, 5, 3)).astype(np.float32)
    lens, y = np.array([5, 2, 3, 1]), np.zeros(4, np.int64)
    batches = [(dev(x), dev(lens), dev(y))]
    m = _PackedLSTM(pack=True)
    with pytest.raises(TypeError, match=r"(?s)lengths must be concrete.*jit=False.*lengths="):
        fit(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1), batches,
            epochs=1, progress=False)
    for pack, jit in ((True, False), (False, True)):  # both ways out train
        m = _PackedLSTM(pack)
        h = fit(m, nn.CrossEntropyLoss(), nn.optim.SGD(m.parameters(), lr=0.1), batches,
                epochs=1, progress=False, jit=jit)
        assert np.isfinite(h["loss"][-1])
