import argparse
import time
import torch
import torch.nn.functional as F
from transformers import BertConfig, BertForMaskedLM

p = argparse.ArgumentParser()
p.add_argument("--compile", action="store_true")
p.add_argument("--steps", type=int, default=40)
args = p.parse_args()

torch.manual_seed(0)
VOCAB, SEQ, BATCH, MASK_ID, PAD_ID = 1000, 64, 8, 4, 0
cfg = BertConfig(vocab_size=VOCAB, hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=256, max_position_embeddings=128)
model = BertForMaskedLM(cfg)
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=0.01)


def mask_tokens(ids, attn, prob=0.15):
    labels = ids.clone()
    probs = torch.full(ids.shape, prob) * attn
    chosen = torch.bernoulli(probs).bool()
    labels[~chosen] = -100
    ids = ids.clone()
    replace = chosen & (torch.rand(ids.shape) < 0.8)
    ids[replace] = MASK_ID
    return ids, labels


def get_batch():
    ids = torch.randint(5, VOCAB, (BATCH, SEQ))
    lengths = torch.randint(SEQ // 2, SEQ + 1, (BATCH,))
    attn = (torch.arange(SEQ)[None, :] < lengths[:, None]).long()
    ids = ids.masked_fill(attn == 0, PAD_ID)
    ids, labels = mask_tokens(ids, attn)
    return ids, attn, labels


def train_step(ids, attn, labels):
    logits = model(input_ids=ids, attention_mask=attn).logits
    sel = labels != -100
    loss = F.cross_entropy(logits[sel], labels[sel])
    loss.backward()
    return loss


if args.compile:
    train_step = torch.compile(train_step)

times = []
for step in range(args.steps):
    ids, attn, labels = get_batch()
    t0 = time.perf_counter()
    loss = train_step(ids, attn, labels)
    opt.step()
    opt.zero_grad(set_to_none=True)
    times.append(time.perf_counter() - t0)
    if step % 10 == 0:
        print(f"step {step:3d} loss {loss.item():.4f} step_time {times[-1] * 1000:.1f} ms")
steady = sorted(times[10:])[len(times[10:]) // 2]
print(f"median steady-state step time: {steady * 1000:.1f} ms (compile={args.compile})")
