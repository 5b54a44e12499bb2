"""Fine-tune a sequence classifier (intent detection) with optional torch.compile.

Uses small randomly initialised configs so the job can run on CPU runners; production
runs load the pretrained checkpoints with the same code path.
"""
import argparse
import logging
import time

import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    DebertaV2Config,
    DebertaV2ForSequenceClassification,
    get_linear_schedule_with_warmup,
)

log = logging.getLogger("finetune")

INTENTS = ["billing", "cancel", "upgrade", "outage", "password", "other"]


def build_model(name, vocab_size, num_labels):
    common = dict(
        vocab_size=vocab_size,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=128,
        num_labels=num_labels,
        id2label=dict(enumerate(INTENTS)),
        label2id={k: i for i, k in enumerate(INTENTS)},
    )
    if name == "bert":
        return BertForSequenceClassification(BertConfig(**common))
    if name == "deberta-v3":
        cfg = DebertaV2Config(**common, relative_attention=True, position_buckets=32, pos_att_type=["p2c", "c2p"])
        return DebertaV2ForSequenceClassification(cfg)
    raise ValueError(name)


def synthetic_intents(n, seq_len, vocab_size, seed):
    """Each intent has a few trigger tokens sprinkled into otherwise random utterances."""
    g = torch.Generator().manual_seed(seed)
    triggers = torch.arange(10, 10 + 4 * len(INTENTS)).view(len(INTENTS), 4)
    labels = torch.randint(0, len(INTENTS), (n,), generator=g)
    lengths = torch.randint(seq_len // 3, seq_len, (n,), generator=g)
    ids = torch.randint(100, vocab_size, (n, seq_len), generator=g)
    for i in range(n):
        pos = torch.randint(1, int(lengths[i]), (3,), generator=g)
        ids[i, pos] = triggers[labels[i], torch.randint(0, 4, (3,), generator=g)]
    mask = (torch.arange(seq_len)[None, :] < lengths[:, None]).long()
    ids = ids * mask  # pad id 0, padded to max_length like the tokenizer config
    ids[:, 0] = 1  # [CLS]
    return TensorDataset(ids, mask, labels)


@torch.no_grad()
def evaluate(model, loader):
    model.eval()
    correct = total = 0
    for ids, mask, labels in loader:
        logits = model(input_ids=ids, attention_mask=mask).logits
        correct += (logits.argmax(-1) == labels).sum().item()
        total += labels.numel()
    model.train()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="deberta-v3", choices=["bert", "deberta-v3"])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--seq-len", type=int, default=48)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--fullgraph", action="store_true", help="fail instead of silently graph-breaking")
    ap.add_argument("--log-every", type=int, default=10)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    torch.manual_seed(0)

    vocab_size = 1000
    train = DataLoader(synthetic_intents(960, args.seq_len, vocab_size, 0), batch_size=args.batch_size, shuffle=True, drop_last=True)
    val = DataLoader(synthetic_intents(96, args.seq_len, vocab_size, 1), batch_size=args.batch_size, drop_last=True)

    model = build_model(args.model, vocab_size, len(INTENTS))
    log.info("%s: %.2fM params", args.model, sum(p.numel() for p in model.parameters()) / 1e6)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    total = args.epochs * len(train)
    sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=total // 10, num_training_steps=total)
    fwd = torch.compile(model, fullgraph=args.fullgraph) if args.compile else model

    step = 0
    for epoch in range(args.epochs):
        t0 = time.perf_counter()
        for ids, mask, labels in train:
            out = fwd(input_ids=ids, attention_mask=mask, labels=labels)
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            if step % args.log_every == 0:
                log.info("epoch %d step %d loss %.4f lr %.2e", epoch, step, out.loss.item(), sched.get_last_lr()[0])
            step += 1
        acc = evaluate(fwd, val)
        log.info("epoch %d done in %.1fs  val_acc %.3f", epoch, time.perf_counter() - t0, acc)


if __name__ == "__main__":
    main()
