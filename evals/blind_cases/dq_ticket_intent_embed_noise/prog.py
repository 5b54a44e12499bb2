"""Fine-tune a small BERT intent classifier for the support-ticket router.

Regularisation: noisy input embeddings (NEFTune-style), truncated at +-2 sigma
so a single unlucky draw cannot blow up a token.  The training forward is
compiled with fullgraph=True so that any graph break fails the nightly job
instead of silently slowing training down.
"""
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import BertConfig, BertForSequenceClassification

SEED = 1234
VOCAB = 3000
MAX_LEN = 48
NUM_LABELS = 4
BATCH = 32
EPOCHS = 3
STEPS_PER_EPOCH = 40
NOISE_ALPHA = 5.0
LR = 1e-3

INTENTS = ["billing", "login", "shipping", "cancel"]


def build_model():
    cfg = BertConfig(
        vocab_size=VOCAB,
        hidden_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=64,
        hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.0,
        num_labels=NUM_LABELS,
        attn_implementation="sdpa",
    )
    return BertForSequenceClassification(cfg)


class TicketDataset:
    """Synthetic stand-in for the tokenised ticket dump (same length stats)."""

    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(100, VOCAB, (n, MAX_LEN), generator=g)
        lengths = torch.randint(12, MAX_LEN + 1, (n,), generator=g)
        self.mask = (torch.arange(MAX_LEN)[None, :] < lengths[:, None]).long()
        self.labels = torch.randint(0, NUM_LABELS, (n,), generator=g)
        # each intent has a few "keyword" token ids sprinkled into the ticket
        keywords = torch.arange(10, 10 + 8 * NUM_LABELS).view(NUM_LABELS, 8)
        for i in range(n):
            L = int(lengths[i])
            pos = torch.randperm(L - 1, generator=g)[:5] + 1
            kw = keywords[self.labels[i], torch.randint(0, 8, (5,), generator=g)]
            self.ids[i, pos] = kw
        self.ids[:, 0] = 2  # [CLS]
        self.ids = self.ids * self.mask  # pad id 0

    def __len__(self):
        return self.ids.shape[0]

    def batches(self, batch_size, shuffle, seed=0):
        order = torch.randperm(len(self), generator=torch.Generator().manual_seed(seed)) if shuffle \
            else torch.arange(len(self))
        for s in range(0, len(self) - batch_size + 1, batch_size):
            idx = order[s:s + batch_size]
            yield self.ids[idx], self.mask[idx], self.labels[idx]


class NoisyEmbeddingClassifier(nn.Module):
    def __init__(self, model, noise_alpha):
        super().__init__()
        self.model = model
        self.noise_alpha = noise_alpha

    def embed(self, input_ids, attention_mask):
        embeds = self.model.bert.embeddings.word_embeddings(input_ids)
        if self.training and self.noise_alpha > 0:
            seq_len, dim = embeds.shape[1], embeds.shape[2]
            sigma = self.noise_alpha / math.sqrt(seq_len * dim)
            noise = torch.empty_like(embeds)
            nn.init.trunc_normal_(noise, mean=0.0, std=sigma, a=-2 * sigma, b=2 * sigma)
            embeds = embeds + noise * attention_mask[..., None].to(embeds.dtype)
        return embeds

    def forward(self, input_ids, attention_mask, labels):
        embeds = self.embed(input_ids, attention_mask)
        out = self.model(inputs_embeds=embeds, attention_mask=attention_mask)
        logits = out.logits
        loss = F.cross_entropy(logits, labels)
        return loss, logits


def evaluate(step_fn, wrapper, data):
    wrapper.eval()
    correct = total = 0
    loss_sum = 0.0
    with torch.no_grad():
        for ids, mask, labels in data.batches(BATCH, shuffle=False):
            loss, logits = step_fn(ids, mask, labels)
            loss_sum += loss.item() * labels.numel()
            correct += (logits.argmax(-1) == labels).sum().item()
            total += labels.numel()
    wrapper.train()
    return loss_sum / total, correct / total


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    print(f"torch {torch.__version__}")

    train = TicketDataset(BATCH * STEPS_PER_EPOCH, seed=1)
    val = TicketDataset(BATCH * 6, seed=2)

    model = build_model()
    wrapper = NoisyEmbeddingClassifier(model, NOISE_ALPHA).train()
    step_fn = torch.compile(wrapper, fullgraph=True)

    decay = [p for n, p in wrapper.named_parameters() if p.ndim >= 2]
    no_decay = [p for n, p in wrapper.named_parameters() if p.ndim < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=LR
    )

    t_start = time.perf_counter()
    for epoch in range(EPOCHS):
        t0 = time.perf_counter()
        running = 0.0
        for step, (ids, mask, labels) in enumerate(train.batches(BATCH, shuffle=True, seed=epoch)):
            loss, _ = step_fn(ids, mask, labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(wrapper.parameters(), 1.0)
            opt.step()
            running += loss.item()
            if epoch == 0 and step == 0:
                print(f"first step (incl. compile): {time.perf_counter() - t0:.1f}s")
        val_loss, val_acc = evaluate(wrapper, wrapper, val)
        print(
            f"epoch {epoch} train_loss {running / (step + 1):.4f} "
            f"val_loss {val_loss:.4f} val_acc {val_acc:.3f} ({time.perf_counter() - t0:.1f}s)"
        )

    print(f"total {time.perf_counter() - t_start:.1f}s")
    ckpt_dir = os.environ.get("CKPT_DIR", "/tmp/ticket_intent_ckpt")
    os.makedirs(ckpt_dir, exist_ok=True)
    torch.save(model.state_dict(), os.path.join(ckpt_dir, "ticket_intent_bert.pt"))
    print(f"saved {ckpt_dir}/ticket_intent_bert.pt  labels: {INTENTS}")


if __name__ == "__main__":
    main()
