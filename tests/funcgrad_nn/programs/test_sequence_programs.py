"""Sequence programs ported from PyTorch, replayed against PyTorch's own runs: char-RNN name
classification with packed sequences, an LSTM tagger fed by a custom Dataset and
``collate_fn``, the EmbeddingBag text classifier, a distilled LM with tied embeddings and
attention masks, a float64 CTC model, the nn.Transformer translation tutorial with greedy
decoding, nanoGPT, seq2seq with Bahdanau attention over a bidirectional GRU (lengths
under jit, per-step teacher forcing). ``fixtures/make_program_fixtures.py`` holds the PyTorch
programs; the ports start from PyTorch's initial state dicts (see ``test_programs.py``).
"""

import math

import numpy as np
import safetensors.numpy

import funcgrad.numpy as fnp
import funcgrad_nn as nn
from funcgrad_nn import functional as F
from funcgrad_nn.utils import rnn
from tests.funcgrad_nn.programs.fixtures.program_data import data
from tests.funcgrad_nn.programs.test_programs import HERE, check_state, close, reference
from tests.helpers import DEVICE, dev, host


def check_keys_bias_aside(model, final, d, atol=2e-5):
    """``check_state``, except for the keys' part of each attention's ``in_proj_bias``: it
    shifts all of a query's scores alike, which the softmax ignores, so its gradient is
    rounding noise (in PyTorch too) that Adam-like optimizers scale into full steps. The
    queries' and values' biases must match."""
    skip = {k for k in final if k.endswith("in_proj_bias")}
    check_state(model, final, atol=atol, skip=skip)
    keep = np.r_[0:d, 2 * d:3 * d]
    for k in skip:
        close(host(model.state_dict()[k])[keep], final[k][keep], atol=atol)


def test_char_rnn_name_classification_on_packed_batches():
    n_letters, n_hidden, n_categories = 10, 12, 4
    arrays = safetensors.numpy.load_file(str(HERE / "char_rnn.safetensors"))
    names, categories = dev(data("char_rnn"))

    def one_hot(name):
        return F.one_hot(name, n_letters).astype(np.float32)

    for cell in ("RNN", "GRU", "LSTM"):
        class CharRNN(nn.Module):
            def __init__(self, cell):
                super().__init__()
                self.cell = cell
                self.rnn = getattr(nn, cell)(n_letters, n_hidden, num_layers=2,
                                             bidirectional=True)
                self.h2o = nn.Linear(2 * n_hidden, n_categories)
                self.softmax = nn.LogSoftmax(dim=1)

            def forward(self, packed):
                output, hidden = self.rnn(packed)
                if self.cell == "LSTM":
                    hidden = hidden[0]
                return (self.softmax(self.h2o(fnp.concatenate([hidden[-2], hidden[-1]], 1))),
                        output)

        prefix = f"init.{cell}."
        model = CharRNN(cell)
        model.load_state_dict({k[len(prefix):]: v for k, v in arrays.items()
                               if k.startswith(prefix)})
        model.to(DEVICE)
        optimizer = nn.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        criterion = nn.NLLLoss()

        losses = []
        for _ in range(3):
            packed = rnn.pack_sequence([one_hot(n) for n in names], enforce_sorted=False)
            loss, grads = nn.value_and_grad(
                lambda m, p: criterion(m(p)[0], categories))(model, packed)  # noqa: B023
            nn.utils.clip_grad_norm_(grads, 1.0)
            optimizer.step(grads)
            losses.append(float(loss))
        close(losses, arrays[f"{cell}.losses"])
        with nn.autograd.no_grad():
            _, out = model(rnn.pack_sequence([one_hot(n) for n in names], enforce_sorted=False))
        close(rnn.pad_packed_sequence(out, batch_first=True)[0], arrays[f"{cell}.output"])
        prefix = f"final.{cell}."
        check_state(model, {k[len(prefix):]: v for k, v in arrays.items()
                            if k.startswith(prefix)})


def test_lstm_tagger_with_a_dataset_collate_fn_and_packed_padding():
    vocab, tags_n, emb, hidden = 15, 6, 8, 7
    init, final, ref = reference("pos_tagger")
    sents, tags = data("pos_tagger")

    class Sentences(nn.data.Dataset):
        def __len__(self):
            return len(sents)

        def __getitem__(self, i):
            return sents[i], tags[i]

    def collate(batch):
        words, labels = zip(*batch)
        lengths = np.array([len(w) for w in words])
        return (dev(rnn.pad_sequence(words, batch_first=True)),
                dev(rnn.pad_sequence(labels, batch_first=True, padding_value=-100)), lengths)

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
            self.lstm = nn.LSTM(emb, hidden, batch_first=True, bidirectional=True)
            self.hidden2tag = nn.Linear(2 * hidden, tags_n)

        def forward(self, words, lengths):
            packed = rnn.pack_padded_sequence(self.embedding(words), lengths, batch_first=True,
                                              enforce_sorted=False)
            out, _ = self.lstm(packed)
            out, _ = rnn.pad_packed_sequence(out, batch_first=True, total_length=words.shape[1])
            return self.hidden2tag(out)

    model = Tagger()
    model.load_state_dict(init)
    model.to(DEVICE)
    loader = nn.data.DataLoader(Sentences(), batch_size=5, shuffle=True, drop_last=True,
                                collate_fn=collate, generator=3)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    optimizer = nn.optim.Adam(model.parameters(), lr=0.01, amsgrad=True, weight_decay=1e-3)
    value_and_grad = nn.value_and_grad(
        lambda m, words, labels, lengths: criterion(m(words, lengths).reshape(-1, tags_n),
                                                    labels.reshape(-1)))
    losses, first_words = [], []
    for _ in range(2):
        for words, labels, lengths in loader:
            first_words.append(host(words[:, 0]))
            loss, grads = value_and_grad(model, words, labels, lengths)
            optimizer.step(grads)
            losses.append(float(loss))
    np.testing.assert_array_equal(first_words, ref["first_words"])  # the shuffled order
    close(losses, ref["losses"])
    check_state(model, final)


def test_embedding_bag_text_classifier_with_offsets():
    vocab, emb, classes = 30, 6, 4
    init, final, ref = reference("text_classification")
    dataset = data("text_classification")

    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for _text, _label in batch:
            label_list.append(_label)
            text_list.append(np.asarray(_text, np.int64))
            offsets.append(len(_text))
        return dev((np.array(label_list), np.concatenate(text_list), np.cumsum(offsets[:-1])))

    class TextClassificationModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.EmbeddingBag(vocab, emb, sparse=False)
            self.fc = nn.Linear(emb, classes)

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))

    model = TextClassificationModel()
    model.load_state_dict(init)
    model.to(DEVICE)
    loader = nn.data.DataLoader(dataset, batch_size=8, collate_fn=collate_batch)
    criterion = nn.CrossEntropyLoss()
    optimizer = nn.optim.SGD(model.parameters(), lr=5.0)
    scheduler = nn.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    step = nn.jit(nn.value_and_grad(lambda m, label, text, offsets:
                                    criterion(m(text, offsets), label)))
    losses, accuracy = [], []
    for _ in range(3):
        model.train()
        for label, text, offsets in loader:
            loss, grads = step(model, label, text, offsets)
            nn.utils.clip_grad_norm_(grads, 0.1)
            optimizer.step(grads)
            losses.append(float(loss))
        scheduler.step()
        model.eval()
        with nn.autograd.no_grad():
            correct = sum(int((model(text, offsets).argmax(1) == label).sum())
                          for label, text, offsets in loader)
        accuracy.append(correct / len(dataset))
    close(losses, ref["losses"])
    close(accuracy, ref["accuracy"])
    check_state(model, final)


def test_distilled_lm_with_tied_embeddings_and_attention_masks():
    vocab, d, heads = 13, 8, 2

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = nn.Embedding(vocab, d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.norm = nn.LayerNorm(d)
            layer = nn.TransformerEncoderLayer(d, heads, 16, 0.0, activation="gelu",
                                               batch_first=True, norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(d),
                                                 enable_nested_tensor=False)
            self.head = nn.Linear(d, vocab, bias=False)
            self.head.weight = self.embedding.weight

        def forward(self, x, pad, mask):
            h = self.embedding(x)
            a, w = self.attn(h, h, h, key_padding_mask=pad, attn_mask=mask)
            h = self.encoder(self.norm(h + a), mask=mask, src_key_padding_mask=pad)
            return self.head(h), w

    init, final, ref = reference("distill_lm")
    model = LM()
    model.load_state_dict(init)
    model.to(DEVICE)
    assert model.head.weight is model.embedding.weight
    tokens, lengths, teacher = dev(data("distill_lm"))
    seq = tokens.shape[1]
    pad = fnp.arange(seq)[None] >= lengths[:, None]
    causal = nn.Transformer.generate_square_subsequent_mask(seq)
    targets = fnp.where(pad, -100, tokens)[:, 1:].reshape(-1)
    kl = nn.KLDivLoss(reduction="batchmean", log_target=True)
    optimizer = nn.optim.NAdam(model.parameters(), lr=1e-2, momentum_decay=4e-3)
    T = 2.0

    def loss_fn(m, mask):
        out, w = m(tokens, pad, mask)
        student = F.log_softmax(out / T, dim=-1)[~pad]
        loss = (kl(student, F.log_softmax(teacher / T, dim=-1)[~pad]) * T * T
                + F.cross_entropy(out[:, :-1].reshape(-1, vocab), targets))
        return loss, w

    losses, weights = [], []
    for mask in (causal, fnp.isinf(causal), causal):
        (loss, w), grads = nn.value_and_grad(loss_fn, has_aux=True)(model, mask)
        assert grads.head.weight is None  # tied: the sum of both uses is under `embedding`
        optimizer.step(grads)
        losses.append(float(loss))
        weights.append(w)
    close(losses, ref["losses"])
    close(weights, ref["weights"])
    check_keys_bias_aside(model, final, d)


def test_float64_ctc_model():
    classes, features, hidden = 5, 6, 8

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv1d(features, hidden, 3, padding=1)
            self.gru = nn.GRU(hidden, hidden, num_layers=2, bidirectional=True)
            self.fc = nn.Linear(2 * hidden, classes)

        def forward(self, x):  # (T, N, F)
            h = fnp.transpose(self.conv(fnp.transpose(x, (1, 2, 0))), (2, 0, 1))
            return self.fc(self.gru(h)[0])

    init, final, ref = reference("ctc")
    model = Model().double()
    model.load_state_dict(init)
    model.to(DEVICE)
    x, input_lengths, targets, target_lengths = dev(data("ctc"))
    ctc_loss = nn.CTCLoss(zero_infinity=True)
    optimizer = nn.optim.Adadelta(model.parameters(), lr=1.0)
    step = nn.jit(nn.value_and_grad(lambda m: ctc_loss(
        F.log_softmax(m(x), dim=2), targets, input_lengths, target_lengths)))
    losses = []
    for _ in range(3):
        loss, grads = step(model)
        assert loss.dtype == np.float64
        optimizer.step(grads)
        losses.append(float(loss))
    np.testing.assert_allclose(losses, ref["losses"], rtol=1e-10)
    for k, v in final.items():
        np.testing.assert_allclose(host(model.state_dict()[k]), v, rtol=1e-9, atol=1e-12,
                                   err_msg=k)
    t_host, n_host = host(targets), host(target_lengths)
    concatenated = dev(np.concatenate([t[:n] for t, n in zip(t_host, n_host)]))
    summed = nn.CTCLoss(reduction="sum")(F.log_softmax(model(x), dim=2), concatenated,
                                         tuple(host(input_lengths).tolist()),
                                         tuple(n_host.tolist()))
    assert math.isclose(float(summed), float(ref["summed"]), rel_tol=1e-10)


def test_transformer_translation_with_masks_noam_warmup_and_greedy_decoding():
    PAD, BOS, vocab_src, vocab_tgt, d = 1, 2, 12, 10, 8

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size, maxlen=16):
            super().__init__()
            den = np.exp(-np.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = np.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = np.zeros((maxlen, emb_size), np.float32)
            pos_embedding[:, 0::2] = np.sin(pos * den)
            pos_embedding[:, 1::2] = np.cos(pos * den)
            self.register_buffer("pos_embedding", pos_embedding[:, None])

        def forward(self, token_embedding):
            return token_embedding + self.pos_embedding[:token_embedding.shape[0], :]

    class TokenEmbedding(nn.Module):
        def __init__(self, vocab_size, emb_size):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, emb_size)
            self.emb_size = emb_size

        def forward(self, tokens):
            return self.embedding(tokens) * math.sqrt(self.emb_size)

    class Seq2SeqTransformer(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.Transformer(d_model=d, nhead=2, num_encoder_layers=2,
                                              num_decoder_layers=2, dim_feedforward=16,
                                              dropout=0.0)
            self.generator = nn.Linear(d, vocab_tgt)
            self.src_tok_emb = TokenEmbedding(vocab_src, d)
            self.tgt_tok_emb = TokenEmbedding(vocab_tgt, d)
            self.positional_encoding = PositionalEncoding(d)

        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                    memory_key_padding_mask):
            src_emb = self.positional_encoding(self.src_tok_emb(src))
            tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                    src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
            return self.generator(outs)

        def encode(self, src, src_mask):
            return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)),
                                            src_mask)

        def decode(self, tgt, memory, tgt_mask):
            return self.transformer.decoder(self.positional_encoding(self.tgt_tok_emb(tgt)),
                                            memory, tgt_mask)

    init, final, ref = reference("translation")
    model = Seq2SeqTransformer()
    model.load_state_dict(init)
    model.to(DEVICE)
    src, tgt = dev(data("translation"))
    loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
    optimizer = nn.optim.Adam(model.parameters(), lr=0.5, betas=(0.9, 0.98), eps=1e-9)
    scheduler = nn.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: d ** -0.5 * min((step + 1) ** -0.5, (step + 1) * 3 ** -1.5))

    def train_loss(m, src, tgt):
        tgt_input = tgt[:-1, :]
        src_mask = fnp.zeros((src.shape[0], src.shape[0]), bool)
        tgt_mask = nn.Transformer.generate_square_subsequent_mask(tgt_input.shape[0])
        src_padding_mask, tgt_padding_mask = (src == PAD).T, (tgt_input == PAD).T
        logits = m(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                   src_padding_mask)
        return loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[1:, :].reshape(-1))

    step = nn.jit(nn.value_and_grad(train_loss))
    losses = []
    for _ in range(5):
        loss, grads = step(model, src, tgt)
        optimizer.step(grads)
        scheduler.step()
        losses.append(float(loss))
    close(losses, ref["losses"])
    check_keys_bias_aside(model, final, d, atol=5e-5)
    model.eval()
    decoded = []
    with nn.autograd.no_grad():
        for i in range(src.shape[1]):
            s = src[:, i:i + 1]
            memory = model.encode(s, fnp.zeros((s.shape[0], s.shape[0]), bool))
            ys = fnp.full((1, 1), BOS)
            for _ in range(5):
                causal = fnp.isinf(nn.Transformer.generate_square_subsequent_mask(ys.shape[0]))
                out = model.decode(ys, memory, causal)
                next_word = int(fnp.argmax(model.generator(fnp.swapaxes(out, 0, 1)[:, -1]), 1)[0])
                ys = fnp.concatenate([ys, fnp.full((1, 1), next_word)], axis=0)
            decoded.append(host(ys).ravel())
    np.testing.assert_array_equal(decoded, ref["decoded"])


def test_nanogpt_with_tied_head_dimension_groups_and_greedy_generation():
    vocab, block, n_embd, n_head = 11, 8, 8, 2

    class LayerNorm(nn.Module):
        def __init__(self, ndim, bias):
            super().__init__()
            self.weight = nn.Parameter(np.ones(ndim, np.float32))
            self.bias = nn.Parameter(np.zeros(ndim, np.float32)) if bias else None

        def forward(self, input):
            return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
            self.c_proj = nn.Linear(n_embd, n_embd, bias=False)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = fnp.split(self.c_attn(x), 3, axis=2)
            k = fnp.swapaxes(k.reshape(B, T, n_head, C // n_head), 1, 2)
            q = fnp.swapaxes(q.reshape(B, T, n_head, C // n_head), 1, 2)
            v = fnp.swapaxes(v.reshape(B, T, n_head, C // n_head), 1, 2)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0,
                                               is_causal=True)
            return self.c_proj(fnp.swapaxes(y, 1, 2).reshape(B, T, C))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=False)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=False)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = LayerNorm(n_embd, bias=False), CausalSelfAttention()
            self.ln_2, self.mlp = LayerNorm(n_embd, bias=False), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab, n_embd), wpe=nn.Embedding(block, n_embd),
                drop=nn.Dropout(0.0), h=nn.ModuleList([Block() for _ in range(2)]),
                ln_f=LayerNorm(n_embd, bias=False)))
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None):
            b, t = idx.shape
            pos = fnp.arange(0, t)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block_ in self.transformer.h:
                x = block_(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                return logits, F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                               targets.reshape(-1), ignore_index=-1)
            return self.lm_head(x[:, [-1], :]), None

    init, final, ref = reference("nanogpt")
    model = GPT()
    model.load_state_dict(init)
    model.to(DEVICE)
    assert model.lm_head.weight is model.transformer.wte.weight
    # configure_optimizers groups by dimension, so the groups' order is not the module's:
    # (name, array) pairs let step() match the gradients by name (PyTorch matches .grad by
    # tensor; plain arrays here would meet the gradients in the module's order).
    param_dict = dict(model.named_parameters())
    optimizer = nn.optim.AdamW([
        {"params": [(n, p) for n, p in param_dict.items() if p.ndim >= 2], "weight_decay": 0.1},
        {"params": [(n, p) for n, p in param_dict.items() if p.ndim < 2], "weight_decay": 0.0}],
        lr=1e-2, betas=(0.9, 0.95))
    tokens, starts = data("nanogpt")
    step = nn.jit(nn.value_and_grad(lambda m, x, y: m(x, y)[1]))
    losses = []
    for ix in starts:
        x = np.stack([tokens[i:i + block] for i in ix])
        y = np.stack([tokens[i + 1:i + 1 + block] for i in ix])
        y[0, :3] = -1
        loss, grads = step(model, *dev((x, y)))
        nn.utils.clip_grad_norm_(grads, 1.0)
        optimizer.step(grads)
        losses.append(float(loss))
    close(losses, ref["losses"])
    check_state(model, final)
    idx = dev(np.zeros((1, 1), np.int64))
    with nn.autograd.no_grad():
        for _ in range(10):
            logits, _ = model(idx[:, -block:])
            idx = fnp.concatenate((idx, fnp.argmax(logits[:, -1, :], -1, keepdims=True)), axis=1)
    np.testing.assert_array_equal(host(idx), ref["generated"])


class BahdanauSeq2Seq(nn.Module):
    def __init__(self, n_src=13, n_tgt=11, e=6, h=8):
        super().__init__()
        self.src_emb = nn.Embedding(n_src, e, padding_idx=0)
        self.encoder = nn.GRU(e, h, num_layers=2, bidirectional=True, batch_first=True)
        self.bridge = nn.Linear(2 * h, h)
        self.tgt_emb = nn.Embedding(n_tgt, e)
        self.attn = nn.Linear(3 * h, h)
        self.v = nn.Linear(h, 1, bias=False)
        self.cell = nn.GRUCell(e + 2 * h, h)
        self.out = nn.Linear(3 * h + e, n_tgt)

    def encode(self, src, lengths):
        # PyTorch packs the padded batch; under jit the lengths are traced, so the GRU takes
        # them directly (outputs past a length are zeros, hidden is each sequence's last)
        out, hidden = self.encoder(self.src_emb(src), lengths=lengths)
        return out, fnp.tanh(self.bridge(fnp.concatenate((hidden[-2], hidden[-1]), 1)))

    def decode_step(self, tok, hidden, enc, mask):
        e = self.tgt_emb(tok)
        h = fnp.tile(hidden[:, None, :], (1, enc.shape[1], 1))
        scores = self.v(fnp.tanh(self.attn(fnp.concatenate((h, enc), 2)))).squeeze(2)
        a = F.softmax(fnp.where(mask == 0, -1e10, scores), dim=1)
        context = fnp.matmul(a[:, None, :], enc).squeeze(1)
        hidden = self.cell(fnp.concatenate((e, context), 1), hidden)
        return self.out(fnp.concatenate((hidden, context, e), 1)), hidden, a

    def forward(self, src, lengths, tgt, forced):
        enc, hidden = self.encode(src, lengths)
        mask = src != 0
        tok, outs, attns = tgt[:, 0], [], []
        for t in range(1, tgt.shape[1]):
            logits, hidden, a = self.decode_step(tok, hidden, enc, mask)
            outs.append(logits)
            attns.append(a)
            tok = tgt[:, t] if forced[t] else logits.argmax(1)
        return fnp.stack(outs, 1), fnp.stack(attns, 1)


def test_bahdanau_attention_over_a_bidirectional_gru_with_lengths_under_jit():
    init, final, ref = reference("bahdanau")
    model = BahdanauSeq2Seq()
    model.load_state_dict(init)
    model.to(DEVICE)
    src, lengths, tgt, forced = data("bahdanau")
    src, lengths, tgt = dev((src, lengths, tgt))
    optimizer = nn.optim.Adam(model.parameters(), lr=1e-2)
    criterion = nn.CrossEntropyLoss(ignore_index=0)

    def loss_fn(m, src, lengths, tgt, forced):
        logits, _ = m(src, lengths, tgt, forced)
        return criterion(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))

    # the teacher-forcing pattern is Python control flow: static, one trace per pattern
    step = nn.jit(nn.value_and_grad(loss_fn), static_argnames="forced")
    losses, norms = [], []
    for i in range(4):
        loss, grads = step(model, src, lengths, tgt, forced=tuple(bool(f) for f in forced[i]))
        norms.append(float(nn.utils.clip_grad_norm_(grads, 1.0)))
        optimizer.step(grads)
        losses.append(float(loss))
    close(losses, ref["losses"])
    close(norms, ref["norms"])
    check_state(model, final)
    with nn.autograd.no_grad():
        _, attentions = model(src, lengths, tgt, [False] * 6)
    close(attentions, ref["attentions"])
