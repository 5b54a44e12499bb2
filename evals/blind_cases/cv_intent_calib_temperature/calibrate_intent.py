"""Train a small intent classifier, then post-hoc temperature-scale it on the dev split.

Usage:
    python calibrate_intent.py --epochs 4 --compile
"""
import argparse
import logging
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("calib")

VOCAB = 3000
PAD = 0


def make_split(n, seq_len, n_intents, gen, label_noise=0.15):
    """Synthetic utterances: each intent has a few keyword ids sprinkled into noise."""
    keywords = torch.randint(1, VOCAB, (n_intents, 6), generator=torch.Generator().manual_seed(7))
    labels = torch.randint(0, n_intents, (n,), generator=gen)
    ids = torch.randint(1, VOCAB, (n, seq_len), generator=gen)
    lengths = torch.randint(seq_len // 2, seq_len + 1, (n,), generator=gen)
    for i in range(n):
        pos = torch.randperm(int(lengths[i]), generator=gen)[:3]
        ids[i, pos] = keywords[labels[i], torch.randint(0, 6, (3,), generator=gen)]
        ids[i, int(lengths[i]):] = PAD
    flip = torch.rand(n, generator=gen) < label_noise
    labels[flip] = torch.randint(0, n_intents, (int(flip.sum()),), generator=gen)
    return ids, labels


class IntentClassifier(nn.Module):
    def __init__(self, n_intents, d_model=64, n_layers=2, n_heads=4, max_len=64):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.randn(1, max_len, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, 4 * d_model, dropout=0.1,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_intents)
        # post-hoc calibration parameters, filled in by fit_temperature()
        self.calibration = {}

    def forward(self, ids):
        pad = ids.eq(PAD)
        h = self.tok(ids) + self.pos[:, : ids.size(1)]
        h = self.encoder(h, src_key_padding_mask=pad)
        keep = (~pad).unsqueeze(-1).to(h.dtype)
        pooled = (self.norm(h) * keep).sum(1) / keep.sum(1).clamp_min(1.0)
        logits = self.head(pooled)
        try:
            temperature = self.calibration["temperature"]
        except KeyError:
            return logits
        return logits / temperature


def batches(ids, labels, bs, shuffle=False, gen=None):
    idx = torch.randperm(len(ids), generator=gen) if shuffle else torch.arange(len(ids))
    for s in range(0, len(ids) - bs + 1, bs):
        j = idx[s: s + bs]
        yield ids[j], labels[j]


@torch.no_grad()
def predict(model, ids, labels, bs):
    model.eval()
    out = [model(x) for x, _ in batches(ids, labels, bs)]
    return torch.cat(out)


def calibration_report(logits, labels, n_bins=10):
    probs = logits.softmax(-1)
    conf, pred = probs.max(-1)
    n = len(conf)
    labels = labels[:n]
    acc = pred.eq(labels).float()
    nll = F.cross_entropy(logits, labels).item()
    ece = 0.0
    edges = torch.linspace(0, 1, n_bins + 1)
    for lo, hi in zip(edges[:-1], edges[1:]):
        m = (conf > lo) & (conf <= hi)
        if m.any():
            ece += m.float().mean().item() * abs(acc[m].mean().item() - conf[m].mean().item())
    return {"acc": acc.mean().item(), "nll": nll, "ece": ece, "mean_conf": conf.mean().item()}


def fit_temperature(logits, labels, iters=200):
    """Classic temperature scaling: minimise dev NLL over a single scalar T."""
    labels = labels[: len(logits)]
    log_t = torch.zeros(1, requires_grad=True)
    opt = torch.optim.LBFGS([log_t], lr=0.1, max_iter=iters)

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(logits / log_t.exp(), labels)
        loss.backward()
        return loss

    opt.step(closure)
    return log_t.detach().exp().item()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--intents", type=int, default=12)
    p.add_argument("--seq-len", type=int, default=32)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    gen = torch.Generator().manual_seed(args.seed)
    tr_x, tr_y = make_split(2048, args.seq_len, args.intents, gen)
    dev_x, dev_y = make_split(768, args.seq_len, args.intents, gen)
    te_x, te_y = make_split(768, args.seq_len, args.intents, gen)

    model = IntentClassifier(args.intents, max_len=args.seq_len)
    runner = torch.compile(model) if args.compile else model
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        tot, nb = 0.0, 0
        for x, y in batches(tr_x, tr_y, args.batch_size, shuffle=True, gen=gen):
            loss = F.cross_entropy(runner(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            tot += loss.item()
            nb += 1
        dev = calibration_report(predict(runner, dev_x, dev_y, args.batch_size), dev_y)
        log.info("epoch %d train_loss %.4f dev_acc %.4f dev_nll %.4f (%.1fs)",
                 epoch, tot / nb, dev["acc"], dev["nll"], time.time() - t0)

    before = calibration_report(predict(runner, te_x, te_y, args.batch_size), te_y)

    dev_logits = predict(runner, dev_x, dev_y, args.batch_size)
    temperature = fit_temperature(dev_logits, dev_y)
    log.info("fitted temperature T=%.4f on %d dev utterances", temperature, len(dev_logits))
    model.calibration["temperature"] = temperature

    after = calibration_report(predict(runner, te_x, te_y, args.batch_size), te_y)
    print(f"{'':10s}{'acc':>8s}{'nll':>8s}{'ece':>8s}{'conf':>8s}")
    for name, r in (("before", before), ("after", after)):
        print(f"{name:10s}{r['acc']:8.4f}{r['nll']:8.4f}{r['ece']:8.4f}{r['mean_conf']:8.4f}")
    if after["nll"] > before["nll"] - 1e-6:
        log.warning("temperature scaling did not reduce test NLL (%.4f -> %.4f)",
                    before["nll"], after["nll"])


if __name__ == "__main__":
    main()
