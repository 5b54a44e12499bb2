"""Long-document triage classifier (Nystromformer) - fine-tuning + doc-level eval.

Documents are tokenized, split into fixed-size blocks, each block inherits the
document label; at eval time block logits are averaged per document.
Set COMPILE=0 to run without torch.compile.
"""
import os
import time
import math
import random
from dataclasses import dataclass

import torch
from torch.utils.data import Dataset, DataLoader
from transformers import NystromformerConfig, NystromformerForSequenceClassification


@dataclass
class RunCfg:
    vocab_size: int = 512
    block_len: int = 128
    hidden: int = 64
    layers: int = 2
    heads: int = 4
    landmarks: int = 16
    n_labels: int = 3
    n_train_docs: int = 96
    n_val_docs: int = 24
    batch_size: int = 8
    epochs: int = 3
    lr: float = 1e-3
    seed: int = 1234
    pad_id: int = 0
    cls_id: int = 1
    compile: bool = os.environ.get("COMPILE", "1") == "1"


# ----------------------------------------------------------------------------- data
def synth_document(rng: random.Random, cfg: RunCfg):
    """Token stream whose label depends on the density of a few 'signal' tokens."""
    label = rng.randrange(cfg.n_labels)
    n_tokens = rng.randint(2, 5) * cfg.block_len + rng.randint(0, cfg.block_len - 1)
    signal = list(range(10 + 20 * label, 10 + 20 * label + 20))
    toks = []
    for _ in range(n_tokens):
        if rng.random() < 0.15:
            toks.append(rng.choice(signal))
        else:
            toks.append(rng.randrange(80, cfg.vocab_size))
    return toks, label


def chunk_document(tokens, block_len, cls_id):
    """Split into full blocks of block_len (CLS + block_len-1 tokens); tail is dropped."""
    body = block_len - 1
    blocks = []
    for start in range(0, len(tokens) - body + 1, body):
        blocks.append([cls_id] + tokens[start:start + body])
    return blocks


class BlockDataset(Dataset):
    def __init__(self, n_docs, cfg: RunCfg, rng: random.Random):
        self.items = []
        for doc_id in range(n_docs):
            toks, label = synth_document(rng, cfg)
            for blk in chunk_document(toks, cfg.block_len, cfg.cls_id):
                self.items.append((doc_id, blk, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def make_collate(cfg: RunCfg):
    def collate(batch):
        max_len = max(len(b[1]) for b in batch)
        ids = torch.full((len(batch), max_len), cfg.pad_id, dtype=torch.long)
        mask = torch.zeros((len(batch), max_len), dtype=torch.long)
        for r, (_, blk, _) in enumerate(batch):
            ids[r, :len(blk)] = torch.tensor(blk)
            mask[r, :len(blk)] = 1
        labels = torch.tensor([b[2] for b in batch])
        doc_ids = torch.tensor([b[0] for b in batch])
        return {"input_ids": ids, "attention_mask": mask, "labels": labels, "doc_ids": doc_ids}
    return collate


# ----------------------------------------------------------------------------- model
def build_model(cfg: RunCfg):
    mcfg = NystromformerConfig(
        vocab_size=cfg.vocab_size,
        hidden_size=cfg.hidden,
        num_hidden_layers=cfg.layers,
        num_attention_heads=cfg.heads,
        intermediate_size=4 * cfg.hidden,
        max_position_embeddings=cfg.block_len + 2,
        segment_means_seq_len=cfg.block_len,
        num_landmarks=cfg.landmarks,
        conv_kernel_size=33,
        num_labels=cfg.n_labels,
        pad_token_id=cfg.pad_id,
    )
    return NystromformerForSequenceClassification(mcfg)


def forward_batch(model, batch):
    return model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"],
                 labels=batch["labels"])


@torch.no_grad()
def evaluate(model, loader, n_labels):
    model.eval()
    doc_logits, doc_label = {}, {}
    total_loss, n = 0.0, 0
    for batch in loader:
        out = forward_batch(model, batch)
        total_loss += out.loss.item() * batch["labels"].numel()
        n += batch["labels"].numel()
        for d, lg, lb in zip(batch["doc_ids"].tolist(), out.logits, batch["labels"].tolist()):
            doc_logits.setdefault(d, torch.zeros(n_labels)).add_(lg)
            doc_label[d] = lb
    correct = sum(int(doc_logits[d].argmax().item() == doc_label[d]) for d in doc_logits)
    model.train()
    return total_loss / max(n, 1), correct / max(len(doc_logits), 1)


def main():
    cfg = RunCfg()
    torch.manual_seed(cfg.seed)
    rng = random.Random(cfg.seed)
    train_ds = BlockDataset(cfg.n_train_docs, cfg, rng)
    val_ds = BlockDataset(cfg.n_val_docs, cfg, rng)
    collate = make_collate(cfg)
    train_dl = DataLoader(train_ds, batch_size=cfg.batch_size, shuffle=True, collate_fn=collate,
                          drop_last=True, generator=torch.Generator().manual_seed(cfg.seed))
    val_dl = DataLoader(val_ds, batch_size=cfg.batch_size, shuffle=False, collate_fn=collate)
    print(f"train blocks={len(train_ds)} val blocks={len(val_ds)} block_len={cfg.block_len}")

    model = build_model(cfg)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"params={n_params/1e6:.2f}M compile={cfg.compile}")
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=0.01)
    total_steps = cfg.epochs * len(train_dl)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / 10) * 0.5 * (1 + math.cos(math.pi * s / total_steps)))

    if cfg.compile:
        model = torch.compile(model)

    model.train()
    step, t0 = 0, time.time()
    for epoch in range(cfg.epochs):
        for batch in train_dl:
            out = forward_batch(model, batch)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step == 1:
                print(f"first step done in {time.time() - t0:.1f}s")
            if step % 10 == 0:
                print(f"epoch {epoch} step {step:3d} loss {out.loss.item():.4f}")
        vloss, vacc = evaluate(model, val_dl, cfg.n_labels)
        print(f"epoch {epoch} val_loss {vloss:.4f} doc_acc {vacc:.3f}")
    print(f"done: {step} steps in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
