"""Training-loop programs ported from PyTorch, replayed against PyTorch's own runs:
fine-tuning with a frozen layer, parameter groups, warmup and warm restarts, gradient
accumulation and a plateau scheduler with early stopping; WGAN-GP, whose critic loss holds a
gradient (double backward); a small U-Net with group, instance and layer norms, transposed
convolutions and upsampling; domain-adversarial training through a gradient reversal
``Function``, with spectral norm, pruning, mixup and a focal loss; stochastic weight
averaging with an EMA model; a torchvision-style ResNet (residual blocks, BatchNorm2d running
statistics, eval-mode logits). ``fixtures/make_program_fixtures.py`` holds the PyTorch programs;
the ports start from PyTorch's initial state dicts (see ``test_programs.py``).
"""

import operator

import numpy as np

import funcgrad
import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn import functional as F
from funcgrad_nn.autograd import Function
from tests.funcgrad_nn.programs.fixtures.program_data import data
from tests.funcgrad_nn.programs.test_programs import check_state, close, reference
from tests.helpers import DEVICE, dev


def test_finetune_with_groups_warmup_restarts_accumulation_and_early_stopping():
    init, final, ref = reference("finetune")
    model = nn.Sequential(nn.Linear(6, 12), nn.GELU(approximate="tanh"), nn.Dropout(0.0),
                          nn.Linear(12, 12), nn.Mish(), nn.Linear(12, 3))
    model.load_state_dict(init)
    model.to(DEVICE)
    model[0].requires_grad_(False)  # PyTorch: p.requires_grad = False for its parameters
    body = [(n, p) for n, p in model.named_parameters() if n[0] != "5"]
    optimizer = nn.optim.AdamW([
        {"params": [p for n, p in body if n.endswith("weight")], "weight_decay": 0.05},
        {"params": [p for n, p in body if n.endswith("bias")], "weight_decay": 0.0},
        {"params": model[5].parameters(), "lr": 3e-2}], lr=3e-3, betas=(0.9, 0.95), eps=1e-7)
    lr_scheduler = nn.optim.lr_scheduler
    warmup = lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 3))
    cosine = lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=4, T_mult=2, eta_min=1e-5)
    scheduler = lr_scheduler.SequentialLR(optimizer, [warmup, cosine], milestones=[3])
    plateau = lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=1, threshold=1e-2,
                                             cooldown=1)
    x, y, xv, yv = dev(data("finetune"))
    criterion = nn.CrossEntropyLoss(label_smoothing=0.05)
    accumulation, best, bad_epochs = 2, float("inf"), 0
    step = nn.jit(nn.value_and_grad(lambda m, x, y: criterion(m(x), y) / accumulation))
    losses, lrs, val = [], [], []
    for _ in range(10):
        model.train()
        accumulated = None
        for i in range(4):
            loss, grads = step(model, x[i * 8:(i + 1) * 8], y[i * 8:(i + 1) * 8])
            losses.append(float(loss))
            accumulated = grads if accumulated is None else funcgrad.tree_util.tree_map(
                operator.add, accumulated, grads)
            if (i + 1) % accumulation == 0:
                nn.utils.clip_grad_norm_(accumulated, 0.5)
                optimizer.step(accumulated)
                accumulated = None
                scheduler.step()
        model.eval()
        with nn.autograd.no_grad():
            val_loss = criterion(model(xv), yv).item()
        val.append(val_loss)
        plateau.step(val_loss)
        lrs.append([g["lr"] for g in optimizer.param_groups])
        if val_loss < best - 1e-3:
            best, bad_epochs = val_loss, 0
        else:
            bad_epochs += 1
            if bad_epochs >= 3:
                break
    assert len(val) == len(ref["val"])  # stopped early at the same epoch
    close(losses, ref["losses"])
    close(val, ref["val"])
    close(lrs, ref["lrs"], rtol=1e-6, atol=0)
    check_state(model, final)


def test_wgan_gp_gradient_penalty_is_a_double_backward():
    nz, lam = 4, 10.0
    init, final, ref = reference("wgan_gp")
    netG = nn.Sequential(nn.Linear(nz, 16), nn.LayerNorm(16), nn.LeakyReLU(0.2), nn.Linear(16, 2))
    netD = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.SiLU(),
                         nn.Linear(16, 1))
    netG.load_state_dict({k[2:]: v for k, v in init.items() if k.startswith("G.")})
    netD.load_state_dict({k[2:]: v for k, v in init.items() if k.startswith("D.")})
    netG.to(DEVICE)
    netD.to(DEVICE)
    optimizerD = nn.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.0, 0.9))
    optimizerG = nn.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.0, 0.9))

    def gradient_penalty(D, real, fake, alpha):
        interpolates = alpha * real + (1 - alpha) * fake
        # autograd.grad(D(interpolates), interpolates, ones, create_graph=True): a gradient
        # inside the loss, differentiated again by the step's value_and_grad.
        gradients = funcgrad.grad(lambda z: D(z).sum())(interpolates)
        return ((fnp.linalg.norm(gradients, 2, axis=1) - 1) ** 2).mean()

    def d_loss(D, real, fake, alpha):
        return D(fake).mean() - D(real).mean() + lam * gradient_penalty(D, real, fake, alpha)

    d_step = nn.jit(nn.value_and_grad(d_loss))
    g_step = nn.jit(nn.value_and_grad(lambda G, D, noise: -D(G(noise)).mean()))
    losses = []
    for real, noise, alpha in zip(*dev(data("wgan_gp"))):
        for _ in range(2):
            fake = funcgrad.stop_gradient(netG(noise))
            errD, grads = d_step(netD, real, fake, alpha)
            optimizerD.step(grads)
        errG, grads = g_step(netG, netD, noise)
        optimizerG.step(grads)
        losses.append([float(errD), float(errG)])
    close(losses, ref["losses"])
    check_state(netD, {k[2:]: v for k, v in final.items() if k.startswith("D.")})
    check_state(netG, {k[2:]: v for k, v in final.items() if k.startswith("G.")})


def test_unet_with_group_instance_and_layer_norms():
    class Block(nn.Module):
        def __init__(self, cin, cout, norm):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, padding_mode="reflect", bias=False)
            self.norm = (nn.GroupNorm(2, cout) if norm == "group" else
                         nn.InstanceNorm2d(cout, affine=True, track_running_stats=True))
            self.conv2 = nn.Conv2d(cout, cout, 3, padding="same", dilation=2)
            self.act = nn.SiLU()

        def forward(self, x):
            return self.act(self.conv2(self.act(self.norm(self.conv1(x)))))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.down1, self.pool, self.down2 = (Block(2, 4, "group"), nn.MaxPool2d(2),
                                                 Block(4, 8, "inst"))
            self.up1, self.dec1 = nn.ConvTranspose2d(8, 4, 2, stride=2), Block(8, 4, "group")
            self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
            self.lateral = nn.Conv1d(4, 4, 3, padding=1, padding_mode="circular")
            self.norm = nn.LayerNorm([4, 8, 8])
            self.out = nn.Conv2d(4, 1, 1)

        def forward(self, x):
            a = self.down1(x)
            b = self.down2(self.pool(a))
            c = self.dec1(fnp.concatenate([self.up1(b), a], 1))
            n, ch, h, w = c.shape
            c = self.norm(c + self.lateral(c.reshape(n, ch, h * w)).reshape(n, ch, h, w))
            return self.out(self.up2(F.avg_pool2d(c, 2, ceil_mode=True, count_include_pad=False)))

    init, final, ref = reference("unet")
    model = UNet()
    model.load_state_dict(init)
    model.to(DEVICE)
    optimizer = nn.optim.RAdam(model.parameters(), lr=1e-2, decoupled_weight_decay=True,
                               weight_decay=1e-2)
    criterion = nn.BCEWithLogitsLoss(pos_weight=dev(np.array([2.0], np.float32)))
    step = nn.jit(nn.value_and_grad(lambda m, x, y: criterion(m(x), y)))
    images, masks = dev(data("unet"))
    losses = []
    for x, y in zip(images, masks):
        loss, grads = step(model, x, y)
        optimizer.step(grads)
        losses.append(float(loss))
    close(losses, ref["losses"])
    check_state(model, final, atol=5e-5)  # the instance norm's running statistics included
    model.eval()
    with nn.autograd.no_grad():
        close(model(images[0]), ref["eval_output"], atol=5e-5)


class GradReverse(Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.alpha, None


def test_domain_adversarial_training_with_gradient_reversal_spectral_norm_and_pruning():
    class DANN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv1d(3, 6, 3), nn.ReLU(), nn.AdaptiveMaxPool1d(1),
                                          nn.Flatten())
            self.classifier = nn.Linear(6, 4)
            self.domain = nn.utils.spectral_norm(nn.Linear(6, 1))

        def forward(self, x, alpha):
            f = self.features(x)
            return self.classifier(f), self.domain(GradReverse.apply(f, alpha))

    init, final, ref = reference("dann")
    model = DANN()
    model.load_state_dict(init)
    model.to(DEVICE)
    nn.utils.prune.l1_unstructured(model.classifier, "weight", amount=0.3)
    optimizer = nn.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def loss_fn(m, x, y, d, mixed, soft, alpha):
        classes, domains = m(x, alpha)
        ce = F.cross_entropy(classes, y, reduction="none")
        return (((1 - fnp.exp(-ce)) ** 2 * ce).mean()
                + F.cross_entropy(m(mixed, alpha)[0], soft, label_smoothing=0.1)
                + F.binary_cross_entropy_with_logits(domains, d))

    value_and_grad = nn.value_and_grad(loss_fn)
    losses = []
    for step, (x, y, d, lam, perm) in enumerate(zip(*dev(data("dann")))):
        lam = float(lam)
        mixed = lam * x + (1 - lam) * x[perm]
        soft = (lam * F.one_hot(y, 4) + (1 - lam) * F.one_hot(y[perm], 4)).astype(np.float32)
        loss, grads = value_and_grad(model, x, y, d, mixed, soft, 0.1 * (step + 1))
        optimizer.step(grads)
        losses.append(float(loss))
    close(losses, ref["losses"])
    check_state(model, final)  # the pruning mask and the power iteration's vectors too


def test_stochastic_weight_averaging_and_an_ema_model():
    swa_utils = nn.optim.swa_utils
    init, final, ref = reference("swa")
    model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))
    model.load_state_dict(init)
    model.to(DEVICE)
    x, y = dev(data("swa"))
    loader = nn.data.DataLoader(nn.data.TensorDataset(x, y), batch_size=8)
    optimizer = nn.optim.SGD(model.parameters(), lr=0.1)
    swa_model = swa_utils.AveragedModel(model)
    ema_model = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9),
                                        use_buffers=True)
    scheduler = nn.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=4)
    swa_scheduler = swa_utils.SWALR(optimizer, swa_lr=0.05, anneal_epochs=2,
                                    anneal_strategy="linear")
    criterion = nn.CrossEntropyLoss()
    step = nn.jit(nn.value_and_grad(lambda m, xb, yb: criterion(m(xb), yb)))
    losses = []
    for epoch in range(6):
        for xb, yb in loader:
            loss, grads = step(model, xb, yb)
            optimizer.step(grads)
            ema_model.update_parameters(model)
            losses.append(float(loss))
        if epoch >= 3:
            swa_model.update_parameters(model)
            swa_scheduler.step()
        else:
            scheduler.step()
    swa_utils.update_bn(loader, swa_model)
    close(losses, ref["losses"])
    for name, m in (("model", model), ("swa", swa_model), ("ema", ema_model)):
        check_state(m, {k[len(name) + 1:]: v for k, v in final.items()
                        if k.startswith(name + ".")})


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout, momentum=None)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = nn.Sequential(BasicBlock(8, 8, 1))
        self.layer2 = nn.Sequential(BasicBlock(8, 16, 2))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x = self.avgpool(x)
        return self.fc(x.reshape(x.shape[0], -1))  # torch.flatten(x, 1)


def test_resnet_batchnorm_running_stats_and_eval_logits():
    init, final, ref = reference("resnet")
    model = ResNet()
    model.load_state_dict(init)
    model.to(DEVICE)
    decay = [p for p in model.parameters() if p.ndim > 1]
    no_decay = [p for p in model.parameters() if p.ndim <= 1]
    optimizer = nn.optim.SGD([{"params": decay, "weight_decay": 5e-4},
                              {"params": no_decay, "weight_decay": 0.0}],
                             lr=0.1, momentum=0.9, nesterov=True)
    scheduler = nn.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=3)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    step = nn.jit(nn.value_and_grad(lambda m, x, y: criterion(m(x), y)))
    x, y = dev(data("resnet"))
    losses, logits = [], []
    for _ in range(3):
        model.train()
        for i in range(0, 16, 8):
            loss, grads = step(model, x[i:i + 8], y[i:i + 8])
            optimizer.step(grads)
            losses.append(float(loss))
        scheduler.step()
        model.eval()
        with nn.autograd.no_grad():
            logits.append(model(x))
    close(losses, ref["losses"])
    close(fnp.stack(logits), ref["logits"])
    # running means/variances (the momentum=None one a cumulative average) and the batch counts
    check_state(model, final)
