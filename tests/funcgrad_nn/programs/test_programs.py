"""PyTorch tutorial programs ported to funcgrad_nn, replayed against PyTorch's own runs.

Each test is the funcgrad_nn port of one program of ``fixtures/make_program_fixtures.py``
(the Quickstart, "Learning PyTorch with Examples", transfer learning, DCGAN, seq2seq with
attention, a Transformer language model), written as a user would port it: the same
modules, losses, optimizers and schedulers, ``loss.backward()`` replaced by
``nn.value_and_grad`` and ``optimizer.step()`` by ``optimizer.step(grads)``. The port starts
from PyTorch's initial state dict and must reproduce PyTorch's losses, the other recorded
values and the final state dict (float32; a few steps, so agreement is to float32 rounding).
"""

import math
import pathlib

import numpy as np
import safetensors.numpy

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn import functional as F
from funcgrad_nn.autograd import Function
from tests.funcgrad_nn.programs.fixtures.program_data import data
from tests.helpers import DEVICE, dev, host

HERE = pathlib.Path(__file__).parent / "fixtures"


def reference(name):
    arrays = safetensors.numpy.load_file(str(HERE / f"{name}.safetensors"))
    init = {k[5:]: v for k, v in arrays.items() if k.startswith("init.")}
    final = {k[6:]: v for k, v in arrays.items() if k.startswith("final.")}
    return init, final, arrays


def check_state(model, final, atol=2e-5, skip=()):
    state = model.state_dict()
    assert sorted(state) == sorted(final)
    for k, v in final.items():
        if k in skip:
            continue
        np.testing.assert_allclose(np.asarray(host(state[k]), np.float32), v, rtol=1e-4, atol=atol,
                                   err_msg=k)


def close(values, expected, rtol=1e-4, atol=1e-5):
    np.testing.assert_allclose(np.asarray(host(values), np.float32), expected, rtol=rtol,
                               atol=atol)


def test_quickstart():
    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(28 * 28, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 10))

        def forward(self, x):
            return self.linear_relu_stack(self.flatten(x))

    init, final, ref = reference("quickstart")
    x, y = dev(data("quickstart"))
    loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=16)
    model = NeuralNetwork()
    assert str(model.load_state_dict(init)) == "<All keys matched successfully>"
    model.to(DEVICE)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = nn.optim.SGD(model.parameters(), lr=1e-1)
    train_step = nn.jit(nn.value_and_grad(lambda m, xb, yb: loss_fn(m(xb), yb)))
    losses, test = [], []
    for _ in range(2):
        model.train()
        for xb, yb in loader:
            loss, grads = train_step(model, xb, yb)
            optimizer.step(grads)
            optimizer.zero_grad()
            losses.append(loss.item())
        model.eval()
        with nn.autograd.no_grad():
            pred = model(x)
            test += [loss_fn(pred, y).item(), (pred.argmax(1) == y).astype(np.float32).mean().item()]
    close(losses, ref["losses"])
    close(test, ref["test"])
    check_state(model, final)


def test_transfer_learning_freeze_after_building_the_optimizer():
    init, final, ref = reference("transfer")
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(4, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
        nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.Linear(4, 4))
    model.load_state_dict(init)
    model.to(DEVICE)
    optimizer = nn.optim.SGD(
        [{"params": model[:8].parameters(), "lr": 1e-3}, {"params": model[9].parameters()}],
        lr=1e-2, momentum=0.9, weight_decay=1e-4)
    scheduler = nn.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=[0.05, 0.5], total_steps=8)
    criterion = nn.CrossEntropyLoss()
    step = nn.jit(nn.value_and_grad(lambda m, xb, yb: criterion(m(xb), yb)))
    x, y = dev(data("transfer"))
    losses, norms, lrs, val = [], [], [], []
    for epoch in range(2):
        if epoch == 1:
            # PyTorch: `p.requires_grad = False` for the stem's parameters, which are in the
            # optimizer: they get no gradient and the optimizer skips them (no momentum, no
            # weight decay), while their BatchNorm statistics keep updating.
            model[:2].requires_grad_(False)
        model.train()
        accumulated = None
        for i in range(0, 16, 4):
            loss, grads = step(model, x[i:i + 4], y[i:i + 4])
            grads = funcgrad.tree_util.tree_map(lambda g: g / 2, grads)
            accumulated = grads if accumulated is None else funcgrad.tree_util.tree_map(
                lambda a, b: a + b, accumulated, grads)
            losses.append(loss.item())
            if i % 8 == 4:
                norms.append(float(nn.utils.clip_grad_norm_(accumulated, 1.0)))
                optimizer.step(accumulated)
                optimizer.zero_grad()
                accumulated = None
                scheduler.step()
                lrs.append(scheduler.get_last_lr())
        model.eval()
        with nn.autograd.no_grad():
            val.append(criterion(model(x), y).item())
    close(losses, ref["losses"])
    close(norms, ref["norms"])
    close(lrs, ref["lrs"])
    close(val, ref["val"])
    check_state(model, final)


def test_dcgan_two_optimizers_and_a_detached_fake():
    nz, ngf, ndf, nc = 8, 4, 4, 3
    init, final, ref = reference("dcgan")
    netG = nn.Sequential(
        nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
        nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2),
        nn.ReLU(True), nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False), nn.Tanh())
    netD = nn.Sequential(
        nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
        nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False), nn.Sigmoid())
    netG.load_state_dict({k[2:]: v for k, v in init.items() if k.startswith("G.")})
    netD.load_state_dict({k[2:]: v for k, v in init.items() if k.startswith("D.")})
    netG.to(DEVICE)
    netD.to(DEVICE)
    criterion = nn.BCELoss()
    optimizerD = nn.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
    optimizerG = nn.optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))

    def d_loss(D, real, fake):
        ones, zeros = fnp.ones(real.shape[0], np.float32), fnp.zeros(real.shape[0], np.float32)
        return (criterion(D(real).reshape(-1), ones)
                + criterion(D(funcgrad.stop_gradient(fake)).reshape(-1), zeros))

    def g_loss(D, fake):
        return criterion(D(fake).reshape(-1), fnp.ones(fake.shape[0], np.float32))

    losses = []
    reals, noises = dev(data("dcgan"))
    for real, noise in zip(reals, noises):
        # The generator runs once, as in PyTorch (its BatchNorm statistics update once): its
        # pullback gives G's gradients later, from errG's gradient with respect to the fake.
        fake, pullback = nn.vjp(lambda G, z: G(z), netG, noise)
        errD, gradsD = nn.value_and_grad(d_loss)(netD, real, fake)
        optimizerD.step(gradsD)
        errG, d_fake = nn.value_and_grad(g_loss, argnums=1)(netD, fake)
        gradsG = pullback(d_fake)  # fake.backward(d_fake)
        optimizerG.step(gradsG)
        losses.append([float(errD), float(errG)])
    close(losses, ref["losses"])
    check_state(netD, {k[2:]: v for k, v in final.items() if k.startswith("D.")})
    check_state(netG, {k[2:]: v for k, v in final.items() if k.startswith("G.")})


SOS, MAX_LENGTH = 0, 5


class EncoderRNN(nn.Module):
    def __init__(self, input_size, hidden_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, input):
        return self.gru(self.dropout(self.embedding(input)))


class BahdanauAttention(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.Wa = nn.Linear(hidden_size, hidden_size)
        self.Ua = nn.Linear(hidden_size, hidden_size)
        self.Va = nn.Linear(hidden_size, 1)

    def forward(self, query, keys):
        scores = self.Va(fnp.tanh(self.Wa(query) + self.Ua(keys)))
        scores = fnp.expand_dims(fnp.squeeze(scores, 2), 1)
        weights = F.softmax(scores, dim=-1)
        return fnp.matmul(weights, keys), weights


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(output_size, hidden_size)
        self.attention = BahdanauAttention(hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, output_size)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
        batch_size = encoder_outputs.shape[0]
        decoder_input = fnp.full((batch_size, 1), SOS, dtype=np.int64)
        decoder_hidden = encoder_hidden
        decoder_outputs, attentions = [], []
        for i in range(MAX_LENGTH):
            decoder_output, decoder_hidden, attn_weights = self.forward_step(
                decoder_input, decoder_hidden, encoder_outputs)
            decoder_outputs.append(decoder_output)
            attentions.append(attn_weights)
            if target_tensor is not None:
                decoder_input = target_tensor[:, i][:, None]  # teacher forcing
            else:
                decoder_input = funcgrad.stop_gradient(fnp.argmax(decoder_output, axis=-1))
        decoder_outputs = F.log_softmax(fnp.concatenate(decoder_outputs, axis=1), dim=-1)
        return decoder_outputs, decoder_hidden, fnp.concatenate(attentions, axis=1)

    def forward_step(self, input, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(input))
        query = fnp.transpose(hidden, (1, 0, 2))
        context, attn_weights = self.attention(query, encoder_outputs)
        output, hidden = self.gru(fnp.concatenate((embedded, context), axis=2), hidden)
        return self.out(output), hidden, attn_weights


def test_seq2seq_with_attention_and_teacher_forcing():
    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.decoder = EncoderRNN(12, 8), AttnDecoderRNN(8, 11)

    init, final, ref = reference("seq2seq")
    model = Seq2Seq()
    model.load_state_dict(init)
    model.to(DEVICE).eval()
    src, tgt = dev(data("seq2seq"))
    encoder_optimizer = nn.optim.Adam(model.encoder.parameters(), lr=0.01)
    decoder_optimizer = nn.optim.Adam(model.decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()

    def loss_fn(m, src, tgt):
        encoder_outputs, encoder_hidden = m.encoder(src)
        decoder_outputs, _, _ = m.decoder(encoder_outputs, encoder_hidden, tgt)
        return criterion(decoder_outputs.reshape(-1, decoder_outputs.shape[-1]), tgt.reshape(-1))

    step = nn.jit(nn.value_and_grad(loss_fn))
    losses = []
    for _ in range(4):
        loss, grads = step(model, src, tgt)
        encoder_optimizer.step(grads.encoder)
        decoder_optimizer.step(grads.decoder)
        losses.append(float(loss))
    close(losses, ref["losses"])
    # The scores' bias shifts every score alike, which the softmax ignores: its gradient is
    # rounding noise (in PyTorch too), which Adam scales into full steps.
    check_state(model, final, skip={"decoder.attention.Va.bias"})
    with nn.autograd.no_grad():
        encoder_outputs, encoder_hidden = model.encoder(src)
        greedy, _, attentions = model.decoder(encoder_outputs, encoder_hidden)
    close(greedy, ref["greedy"], atol=5e-5)
    close(attentions, ref["attentions"])


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = np.arange(max_len)[:, None]
        div_term = np.exp(np.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = np.zeros((max_len, 1, d_model), np.float32)
        pe[:, 0, 0::2] = np.sin(position * div_term)
        pe[:, 0, 1::2] = np.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x):
        return self.dropout(x + self.pe[:x.shape[0]])


class TransformerModel(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
        super().__init__()
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = nn.TransformerEncoder(layer, nlayers,
                                                         enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)

    def forward(self, src, src_mask=None):
        src = self.pos_encoder(self.embedding(src) * math.sqrt(self.d_model))
        if src_mask is None:
            src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        return self.linear(self.transformer_encoder(src, src_mask))


def test_transformer_language_model():
    ntokens, bptt = 20, 6
    init, final, ref = reference("transformer_lm")
    model = TransformerModel(ntokens, 8, 2, 16, 2, dropout=0.2)
    model.load_state_dict(init)
    model.to(DEVICE).eval()
    train_data = dev(data("transformer_lm")[:88].reshape(4, 22).T.copy())
    criterion = nn.CrossEntropyLoss()
    optimizer = nn.optim.SGD(model.parameters(), lr=5.0)
    scheduler = nn.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    step = nn.jit(nn.value_and_grad(
        lambda m, x, y: criterion(m(x).reshape(-1, ntokens), y)))
    losses = []
    for _ in range(2):
        for i in range(0, train_data.shape[0] - 1, bptt):
            seq_len = min(bptt, len(train_data) - 1 - i)
            x, y = train_data[i:i + seq_len], train_data[i + 1:i + 1 + seq_len].reshape(-1)
            loss, grads = step(model, x, y)
            nn.utils.clip_grad_norm_(grads, 0.5)
            optimizer.step(grads)
            losses.append(float(loss))
        scheduler.step()
    close(losses, ref["losses"])
    check_state(model, final, atol=5e-5)


class LegendrePolynomial3(Function):
    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


def test_custom_function_legendre_polynomial():
    _, final, ref = reference("legendre")
    x, y = dev(data("legendre"))
    params = [fnp.full((), v, dtype=np.float32) for v in (0.0, -1.0, 0.0, 0.3)]
    learning_rate = 5e-5

    def loss_fn(a, b, c, d):
        y_pred = a + b * LegendrePolynomial3.apply(c + d * x)
        return ((y_pred - y) ** 2).sum()

    value_and_grad = funcgrad.value_and_grad(loss_fn, argnums=(0, 1, 2, 3))
    losses = []
    for _ in range(40):
        loss, grads = value_and_grad(*params)
        losses.append(float(loss))
        with nn.autograd.no_grad():
            params = [p - learning_rate * g for p, g in zip(params, grads)]
    close(losses, ref["losses"])
    close([params], [[final[k] for k in "abcd"]])
    assert all(p.dtype == np.float32 for p in params)


def test_dynamic_net_with_weight_sharing_and_an_unused_weight():
    class DynamicNet(nn.Module):
        def __init__(self):
            super().__init__()
            for name in "abcde":
                setattr(self, name, nn.Parameter(np.zeros((), np.float32)))

        def forward(self, x, terms):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, terms):
                y = y + self.e * x ** exp
            return y

    init, final, ref = reference("dynamic_net")
    x, y, terms = data("dynamic_net")
    x, y = dev((x, y))
    model = DynamicNet()
    model.load_state_dict(init)
    model.to(DEVICE)
    criterion = nn.MSELoss(reduction="sum")
    optimizer = nn.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    value_and_grad = nn.value_and_grad(lambda m, n: criterion(m(x, n), y))
    losses = []
    for n in terms:
        loss, grads = value_and_grad(model, int(n))
        if n <= 4:
            # `e` is not used: PyTorch leaves e.grad None and SGD skips it (no momentum
            # step); nn.grad gives zeros, so say so.
            grads.e = None
        optimizer.step(grads)
        losses.append(float(loss))
    close(losses, ref["losses"])
    check_state(model, final)


def test_spatial_transformer_network_from_the_identity():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
            self.conv2 = nn.Conv2d(4, 8, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(8 * 4 * 4, 16)
            self.fc2 = nn.Linear(16, 10)
            self.dropout = nn.Dropout()  # F.dropout(x, training=self.training) in PyTorch
            self.localization = nn.Sequential(
                nn.Conv2d(1, 4, kernel_size=7), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                nn.Conv2d(4, 5, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(5 * 3 * 3, 16), nn.ReLU(True),
                                        nn.Linear(16, 3 * 2))
            nn.init.zeros_(self.fc_loc[2].weight)
            self.fc_loc[2].bias[...] = np.array([1, 0, 0, 0, 1, 0], np.float32)

        def stn(self, x):
            xs = self.localization(x).reshape(-1, 5 * 3 * 3)
            theta = self.fc_loc(xs).reshape(-1, 2, 3)
            grid = F.affine_grid(theta, x.shape, align_corners=False)
            return F.grid_sample(x, grid, align_corners=False)

        def forward(self, x):
            x = self.stn(x)
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = self.dropout(F.relu(self.fc1(x.reshape(-1, 8 * 4 * 4))))
            return F.log_softmax(self.fc2(x), dim=1)

    init, final, ref = reference("spatial_transformer")
    model = Net()
    model.load_state_dict(init)
    model.to(DEVICE).eval()
    x, y = dev(data("spatial_transformer"))
    optimizer = nn.optim.SGD(model.parameters(), lr=0.01)
    step = nn.jit(nn.value_and_grad(lambda m, x, y: F.nll_loss(m(x), y)))
    losses = []
    for _ in range(4):
        loss, grads = step(model, x, y)
        optimizer.step(grads)
        losses.append(float(loss))
    close(losses, ref["losses"])
    check_state(model, final)  # theta's layer too: PyTorch's one-sided slopes at the pixels
