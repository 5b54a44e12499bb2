"""Package the CANINE message router for the edge scoring service.

Steps: (1) short fine-tune of the character-level router on the labelled
sample set, (2) torch.export with dynamic batch / length so one artifact
serves every request size, (3) save the .pt2 and run the release smoke test
(exported program vs. eager model on requests of several lengths).
"""
import os
import random
import time

import torch
import torch.nn.functional as F
from transformers import CanineConfig, CanineForSequenceClassification

SEED = 1234
MAX_CHARS = 512
CLS_CP, SEP_CP, PAD_CP = 0xE000, 0xE001, 0
LABELS = ["billing", "delivery", "account"]
OUT_DIR = os.environ.get("ROUTER_OUT", "/tmp/msg_router_artifacts")

TEMPLATES = {
    "billing": [
        "I was charged twice for order {n}, please refund",
        "Why is there a fee of {n} EUR on my invoice?",
        "Rechnung {n} ist falsch, bitte korrigieren",
        "cobro duplicado en la factura {n}",
    ],
    "delivery": [
        "my parcel {n} has not arrived yet",
        "Paket {n} wurde an die falsche Adresse geliefert",
        "where is my package? tracking {n}",
        "el pedido {n} llego roto",
    ],
    "account": [
        "I cannot log in, reset password for user{n}",
        "please delete my account {n}",
        "Konto {n} gesperrt, wie entsperren?",
        "cambiar el correo de mi cuenta {n}",
    ],
}


def build_model():
    cfg = CanineConfig(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        num_hash_functions=4,
        num_hash_buckets=2048,
        local_transformer_stride=16,
        downsampling_rate=4,
        max_position_embeddings=MAX_CHARS + 64,
        num_labels=len(LABELS),
    )
    return CanineForSequenceClassification(cfg)


def encode(texts, max_chars=MAX_CHARS):
    """Codepoint encoding as done by CanineTokenizer: [CLS] chars [SEP], padded to the longest."""
    seqs = [[CLS_CP] + [ord(c) for c in t[: max_chars - 2]] + [SEP_CP] for t in texts]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), PAD_CP, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    return ids, mask


def make_samples(n, rng):
    out = []
    for _ in range(n):
        lab = rng.randrange(len(LABELS))
        tmpl = rng.choice(TEMPLATES[LABELS[lab]])
        out.append((tmpl.format(n=rng.randrange(10000, 99999)), lab))
    return out


def finetune(model, steps=40, batch_size=16):
    rng = random.Random(SEED)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(steps):
        batch = make_samples(batch_size, rng)
        ids, mask = encode([t for t, _ in batch])
        labels = torch.tensor([l for _, l in batch])
        logits = model(input_ids=ids, attention_mask=mask).logits
        loss = F.cross_entropy(logits, labels)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            acc = (logits.argmax(-1) == labels).float().mean().item()
            print(f"  step {step:3d}  loss {loss.item():.4f}  acc {acc:.2f}")
    model.eval()
    return model


class RouterForExport(torch.nn.Module):
    """Plain-tensor signature for the serving runtime: (ids, mask) -> probabilities."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        logits = self.model(input_ids=input_ids, attention_mask=attention_mask).logits
        return logits.softmax(-1)


def export_router(wrapper, example_texts):
    ids, mask = encode(example_texts)
    batch = torch.export.Dim("batch", min=1, max=64)
    chars = torch.export.Dim("chars", min=8, max=MAX_CHARS)
    dynamic_shapes = {
        "input_ids": {0: batch, 1: chars},
        "attention_mask": {0: batch, 1: chars},
    }
    with torch.no_grad():
        ep = torch.export.export(wrapper, (ids, mask), dynamic_shapes=dynamic_shapes)
    return ep


def smoke_test(ep_path, wrapper):
    loaded = torch.export.load(ep_path).module()
    rng = random.Random(SEED + 1)
    requests = [
        ["refund please"],
        [t for t, _ in make_samples(3, rng)],
        [t for t, _ in make_samples(8, rng)],
        ["x" * 300 + " wrong invoice amount", "parcel lost"],
    ]
    worst = 0.0
    for texts in requests:
        ids, mask = encode(texts)
        with torch.no_grad():
            ref = wrapper(ids, mask)
            got = loaded(ids, mask)
        diff = (ref - got).abs().max().item()
        worst = max(worst, diff)
        print(f"  request batch={ids.shape[0]:2d} chars={ids.shape[1]:4d}  max|diff|={diff:.2e}")
    return worst


def main():
    torch.manual_seed(SEED)
    os.makedirs(OUT_DIR, exist_ok=True)
    t0 = time.time()
    print("[1/3] fine-tuning router")
    model = finetune(build_model())
    wrapper = RouterForExport(model).eval()

    print("[2/3] exporting (dynamic batch and length)")
    example = [t for t, _ in make_samples(4, random.Random(SEED + 7))]
    ep = export_router(wrapper, example)
    ep_path = os.path.join(OUT_DIR, "msg_router.pt2")
    torch.export.save(ep, ep_path)
    print(f"  saved {ep_path}")

    print("[3/3] release smoke test")
    worst = smoke_test(ep_path, wrapper)
    status = "PASS" if worst < 1e-4 else "FAIL"
    print(f"smoke test {status}: worst max|diff| {worst:.2e}  ({time.time() - t0:.1f}s)")
    if status != "PASS":
        raise SystemExit(1)


if __name__ == "__main__":
    main()
