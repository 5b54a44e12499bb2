"""Fine-tune a small BART sequence classifier for support-ticket intent routing.

Runs a short CPU training job with torch.compile(fullgraph=True) so we catch any
graph breaks early (the same job runs on the GPU trainers with the big config).
"""
import math
import random
import time

import torch
from transformers import BartConfig, BartForSequenceClassification

SEED = 1234
VOCAB = 2000
PAD, BOS, EOS = 1, 0, 2
INTENTS = ["billing", "login", "shipping", "refund", "cancel", "other"]
BATCH = 8
STEPS = 12
MAX_LEN = 40


def set_seed(seed):
    random.seed(seed)
    torch.manual_seed(seed)


def build_model():
    cfg = BartConfig(
        vocab_size=VOCAB,
        d_model=96,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=192,
        decoder_ffn_dim=192,
        max_position_embeddings=128,
        pad_token_id=PAD,
        bos_token_id=BOS,
        eos_token_id=EOS,
        decoder_start_token_id=EOS,
        num_labels=len(INTENTS),
        problem_type="single_label_classification",
        dropout=0.1,
        classifier_dropout=0.0,
    )
    return BartForSequenceClassification(cfg)


class TicketStream:
    """Synthetic tokenised tickets: intent-specific keyword tokens mixed into noise."""

    def __init__(self, n, seed):
        g = random.Random(seed)
        self.items = []
        for _ in range(n):
            label = g.randrange(len(INTENTS))
            length = g.randint(12, MAX_LEN - 2)
            body = [g.randrange(10, VOCAB) for _ in range(length)]
            for k in range(3):
                body[g.randrange(length)] = 10 + label * 7 + k
            self.items.append(([BOS] + body + [EOS], label))

    def batches(self, bs):
        for i in range(0, len(self.items) - bs + 1, bs):
            chunk = self.items[i:i + bs]
            yield collate(chunk)


def collate(chunk):
    # fixed-length padding keeps shapes static for the compiled step
    ids = torch.full((len(chunk), MAX_LEN), PAD, dtype=torch.long)
    mask = torch.zeros((len(chunk), MAX_LEN), dtype=torch.long)
    labels = torch.empty(len(chunk), dtype=torch.long)
    for r, (toks, lab) in enumerate(chunk):
        ids[r, :len(toks)] = torch.tensor(toks)
        mask[r, :len(toks)] = 1
        labels[r] = lab
    return ids, mask, labels


def lr_at(step, base=3e-4, warmup=3):
    if step < warmup:
        return base * (step + 1) / warmup
    return base * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, STEPS - warmup)))


def train_step(model, opt, batch):
    ids, mask, labels = batch
    out = model(input_ids=ids, attention_mask=mask, labels=labels)
    out.loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)
    return out.loss.detach(), out.logits.detach()


@torch.no_grad()
def evaluate(model, stream):
    model.eval()
    correct = total = 0
    for ids, mask, labels in stream.batches(BATCH):
        logits = model(input_ids=ids, attention_mask=mask).logits
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / max(1, total)


def main():
    set_seed(SEED)
    model = build_model()
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.01)

    compiled = torch.compile(model, fullgraph=True)

    train = TicketStream(BATCH * STEPS, seed=1)
    val = TicketStream(BATCH * 3, seed=2)

    t0 = time.time()
    for step, batch in enumerate(train.batches(BATCH)):
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        ts = time.time()
        loss, logits = train_step(compiled, opt, batch)
        acc = (logits.argmax(-1) == batch[2]).float().mean().item()
        print(f"step {step:02d} loss {loss.item():.4f} acc {acc:.2f} lr {lr_at(step):.2e} "
              f"({time.time() - ts:.2f}s)")
    print(f"train done in {time.time() - t0:.1f}s")
    print(f"val acc {evaluate(compiled, val):.3f}")


if __name__ == "__main__":
    main()
