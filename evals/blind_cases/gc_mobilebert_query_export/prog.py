"""Export the on-device query-intent classifier (MobileBERT) to a .pt2 artifact.

Pipeline: build the tokenizer-free hashed vocab, fine-tune a small MobileBERT head
for a few steps on the synthetic intent set, export with dynamic batch / sequence
length, then run the release parity check on a batch of real-looking queries.
"""
import os
import re
import time
import zlib

import torch
import torch.nn.functional as F
from transformers import MobileBertConfig, MobileBertForSequenceClassification

PAD_ID, CLS_ID, SEP_ID, UNK_ID = 0, 1, 2, 3
VOCAB_SIZE = 2048
MAX_LEN = 128
INTENTS = ["weather", "timer", "music", "navigation", "smalltalk"]
ARTIFACT = os.environ.get("INTENT_ARTIFACT", "/tmp/intent_mobilebert.pt2")

TEMPLATES = {
    "weather": ["what is the weather in {}", "will it rain in {} tomorrow", "forecast for {}"],
    "timer": ["set a timer for {} minutes", "remind me in {} minutes", "start a {} minute timer"],
    "music": ["play some {}", "put on {} music", "shuffle my {} playlist"],
    "navigation": ["directions to {}", "how do i get to {}", "navigate to {} avoiding tolls"],
    "smalltalk": ["how are you {}", "tell me a joke about {}", "good {}"],
}
FILLERS = ["paris", "ten", "jazz", "the airport", "today", "berlin", "five", "rock", "home", "morning"]


def tokenize(text):
    words = re.findall(r"[a-z0-9']+", text.lower())
    ids = [CLS_ID] + [4 + zlib.crc32(w.encode()) % (VOCAB_SIZE - 4) for w in words][: MAX_LEN - 2] + [SEP_ID]
    return ids


def collate(texts):
    seqs = [tokenize(t) for t in texts]
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), PAD_ID, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
    return ids, mask


def synthetic_dataset(n, seed):
    g = torch.Generator().manual_seed(seed)
    texts, labels = [], []
    for _ in range(n):
        label = int(torch.randint(len(INTENTS), (1,), generator=g))
        tmpl = TEMPLATES[INTENTS[label]]
        t = tmpl[int(torch.randint(len(tmpl), (1,), generator=g))]
        texts.append(t.format(FILLERS[int(torch.randint(len(FILLERS), (1,), generator=g))]))
        labels.append(label)
    return texts, torch.tensor(labels)


def build_model():
    cfg = MobileBertConfig(
        vocab_size=VOCAB_SIZE,
        hidden_size=128,
        embedding_size=64,
        intermediate_size=256,
        num_hidden_layers=4,
        num_attention_heads=4,
        intra_bottleneck_size=64,
        true_hidden_size=64,
        num_feedforward_networks=2,
        max_position_embeddings=MAX_LEN,
        num_labels=len(INTENTS),
        pad_token_id=PAD_ID,
    )
    return MobileBertForSequenceClassification(cfg)


def finetune(model, steps=30, batch_size=32):
    texts, labels = synthetic_dataset(steps * batch_size, seed=0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    model.train()
    for step in range(steps):
        sl = slice(step * batch_size, (step + 1) * batch_size)
        ids, mask = collate(texts[sl])
        logits = model(input_ids=ids, attention_mask=mask).logits
        loss = F.cross_entropy(logits, labels[sl])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            print(f"step {step:3d}  loss {loss.item():.4f}")
    model.eval()
    return model


def export_for_serving(model):
    # The app sends single queries and small batches; an empty query is just [CLS] [SEP].
    batch = torch.export.Dim("batch", min=1, max=64)
    seq = torch.export.Dim("seq", min=2, max=MAX_LEN)
    ids, mask = collate(["what is the weather in paris", "play some jazz", "set a timer for ten minutes"])
    with torch.no_grad():
        ep = torch.export.export(
            model,
            (),
            {"input_ids": ids, "attention_mask": mask},
            dynamic_shapes={"input_ids": {0: batch, 1: seq}, "attention_mask": {0: batch, 1: seq}},
            strict=False,
        )
    torch.export.save(ep, ARTIFACT)
    return ep


def parity_check(model, ep):
    requests = [
        ["navigate to the airport avoiding tolls", "good morning"],
        ["play some rock"],
        [""],
        ["", "hi"],
        ["will it rain in berlin tomorrow"] * 8,
        ["how do i get to " + " ".join(["home"] * 100)],
    ]
    served = torch.export.load(ARTIFACT).module()
    worst = 0.0
    for texts in requests:
        ids, mask = collate(texts)
        with torch.no_grad():
            ref = model(input_ids=ids, attention_mask=mask).logits
            out = served(input_ids=ids, attention_mask=mask).logits
        diff = (out - ref).abs().max().item()
        worst = max(worst, diff)
        preds = [INTENTS[i] for i in out.argmax(-1).tolist()]
        print(f"  shape {tuple(ids.shape)}  max|diff| {diff:.2e}  -> {preds[:3]}")
    assert worst < 1e-4, f"parity check failed: {worst}"
    print(f"parity OK (worst {worst:.2e})")


def main():
    torch.manual_seed(0)
    t0 = time.time()
    model = finetune(build_model())
    print(f"fine-tune done in {time.time() - t0:.1f}s")
    t1 = time.time()
    ep = export_for_serving(model)
    print(f"exported to {ARTIFACT} in {time.time() - t1:.1f}s")
    parity_check(model, ep)


if __name__ == "__main__":
    main()
