"""Package the intent encoder as an AOTInductor artifact for the CPU serving fleet.

Steps:
  1. build the encoder and load the checkpoint (random init when none is given)
  2. run the validation split while recording per-layer activation ranges
  3. export with a dynamic batch dimension and compile with AOTInductor
  4. smoke-test the package against the eager model
  5. write activation_ranges.json next to the package (the serving side uses
     it for input-drift alerts)
"""
import argparse
import json
import logging
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("package_intent")


class ConvBlock(nn.Module):
    def __init__(self, dim, kernel):
        super().__init__()
        self.conv = nn.Conv1d(dim, dim, kernel, padding=kernel // 2)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):  # x: [B, T, D]
        h = self.conv(x.transpose(1, 2)).transpose(1, 2)
        return self.norm(x + F.gelu(h))


class AttentionPool(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.score = nn.Linear(dim, 1)

    def forward(self, x, mask):
        s = self.score(x).squeeze(-1).masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return torch.einsum("bt,btd->bd", w, x)


class IntentEncoder(nn.Module):
    def __init__(self, vocab, dim, n_blocks, n_intents, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embed = nn.Embedding(vocab, dim, padding_idx=pad_id)
        self.blocks = nn.ModuleList([ConvBlock(dim, k) for k in (3, 5, 3)[:n_blocks]])
        self.pool = AttentionPool(dim)
        self.proj = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, n_intents)

    def forward(self, input_ids):
        mask = input_ids != self.pad_id
        x = self.embed(input_ids)
        for blk in self.blocks:
            x = blk(x)
        z = torch.tanh(self.proj(self.pool(x, mask)))
        return self.head(z)


class ActivationRangeMonitor:
    """Keeps per-batch abs-max of selected layers' outputs."""

    def __init__(self, kinds=(nn.Linear, nn.Conv1d, nn.LayerNorm)):
        self.kinds = kinds
        self.records = {}
        self.handles = []

    def attach(self, model):
        for name, mod in model.named_modules():
            if isinstance(mod, self.kinds):
                self.handles.append(mod.register_forward_hook(self._make_hook(name)))
        log.info("monitoring %d layers", len(self.handles))
        return self

    def _make_hook(self, name):
        def hook(module, inputs, output):
            self.records.setdefault(name, []).append(output.detach().abs().amax())
        return hook

    def summary(self):
        out = {}
        for name, vals in self.records.items():
            stacked = torch.stack(vals)
            out[name] = {
                "absmax": float(stacked.amax()),
                "median_batch_absmax": float(stacked.median()),
                "batches": len(vals),
            }
        return out


def make_split(n_batches, batch, seq_len, vocab, n_intents, seed):
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        ids = torch.randint(1, vocab, (batch, seq_len), generator=g)
        lengths = torch.randint(seq_len // 3, seq_len + 1, (batch,), generator=g)
        ids[torch.arange(seq_len)[None, :] >= lengths[:, None]] = 0
        labels = torch.randint(0, n_intents, (batch,), generator=g)
        batches.append((ids, labels))
    return batches


@torch.no_grad()
def evaluate(model, batches):
    correct = total = 0
    loss_sum = 0.0
    for ids, labels in batches:
        logits = model(ids)
        loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
    return loss_sum / total, correct / total


def export_and_package(model, example, out_dir):
    batch = torch.export.Dim("batch", min=2, max=256)
    t0 = time.time()
    ep = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
    log.info("exported in %.1fs (%d graph nodes)", time.time() - t0, len(ep.graph.nodes))
    t0 = time.time()
    path = torch._inductor.aoti_compile_and_package(
        ep, package_path=os.path.join(out_dir, "intent_encoder.pt2"))
    log.info("AOTInductor package written to %s in %.1fs", path, time.time() - t0)
    return path


@torch.no_grad()
def smoke_test(model, package_path, batches):
    runner = torch._inductor.aoti_load_package(package_path)
    worst = 0.0
    for ids, _ in batches:
        ref = model(ids)
        got = runner(ids)
        worst = max(worst, (ref - got).abs().max().item())
    return worst


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", default=None)
    p.add_argument("--out-dir", default="artifacts")
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--blocks", type=int, default=3)
    p.add_argument("--intents", type=int, default=24)
    p.add_argument("--val-batches", type=int, default=12)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq-len", type=int, default=48)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-package", action="store_true")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    os.makedirs(args.out_dir, exist_ok=True)

    torch.manual_seed(args.seed)
    model = IntentEncoder(args.vocab, args.dim, args.blocks, args.intents)
    if args.ckpt:
        model.load_state_dict(torch.load(args.ckpt, map_location="cpu"))
    model.eval()

    val = make_split(args.val_batches, args.batch, args.seq_len, args.vocab, args.intents, args.seed + 1)
    monitor = ActivationRangeMonitor().attach(model)
    loss, acc = evaluate(model, val)
    log.info("validation: loss=%.4f acc=%.3f over %d batches", loss, acc, len(val))

    if not args.skip_package:
        path = export_and_package(model, val[0][0], args.out_dir)
        worst = smoke_test(model, path, val[:3])
        log.info("smoke test: max |eager - package| = %.3e", worst)
        if worst > 1e-3:
            raise SystemExit("package does not match the eager model")

    ranges = monitor.summary()
    report_path = os.path.join(args.out_dir, "activation_ranges.json")
    with open(report_path, "w") as f:
        json.dump({"seq_len": args.seq_len, "layers": ranges}, f, indent=2)
    top = sorted(ranges.items(), key=lambda kv: -kv[1]["absmax"])[:3]
    for name, r in top:
        log.info("range %-16s absmax=%.3f median=%.3f", name, r["absmax"], r["median_batch_absmax"])
    log.info("wrote %s (%d layers)", report_path, len(ranges))


if __name__ == "__main__":
    main()
