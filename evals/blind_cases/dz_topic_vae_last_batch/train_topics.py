"""Neural topic model (ProdLDA-style Dirichlet VAE) on support-ticket bag-of-words.

Trains an amortised Dirichlet posterior over K topics, reports held-out
perplexity and the top words per topic.  The train step is compiled with
fullgraph=True so we notice if anything in the model falls back to Python.
"""
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Dirichlet
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)

VOCAB = 1500
N_TOPICS = 20
HIDDEN = 256
N_TRAIN = 2600
N_HELDOUT = 512
BATCH = 128
EVAL_BATCH = 256
EPOCHS = 3
LR = 2e-3
PRIOR_ALPHA = 0.02


# --------------------------------------------------------------------------- data
def make_corpus(n_docs, vocab, n_topics, gen):
    """Synthetic LDA corpus: sparse topic-word tables, doc lengths 40-160."""
    beta = torch.distributions.Dirichlet(torch.full((vocab,), 0.05)).sample((n_topics,))
    theta = torch.distributions.Dirichlet(torch.full((n_topics,), 0.3)).sample((n_docs,))
    word_probs = theta @ beta
    lengths = torch.randint(40, 160, (n_docs,), generator=gen)
    bows = torch.zeros(n_docs, vocab)
    for i in range(n_docs):
        idx = torch.multinomial(word_probs[i], int(lengths[i]), replacement=True, generator=gen)
        bows[i].index_add_(0, idx, torch.ones(idx.numel()))
    return bows


# --------------------------------------------------------------------------- model
class Encoder(nn.Module):
    def __init__(self, vocab, hidden, n_topics):
        super().__init__()
        self.fc1 = nn.Linear(vocab, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.to_alpha = nn.Linear(hidden, n_topics)

    def forward(self, bow):
        x = torch.log1p(bow)
        h = F.softplus(self.fc1(x))
        h = F.softplus(self.fc2(h))
        alpha = F.softplus(self.to_alpha(h))
        return alpha.clamp(min=1e-3, max=50.0)


class ProdLDA(nn.Module):
    def __init__(self, vocab, hidden, n_topics, prior_alpha):
        super().__init__()
        self.encoder = Encoder(vocab, hidden, n_topics)
        self.topic_word = nn.Linear(n_topics, vocab, bias=False)
        self.dec_bn = nn.BatchNorm1d(vocab, affine=False)
        self.register_buffer("prior", torch.full((n_topics,), prior_alpha))

    def posterior(self, bow):
        return self.encoder(bow)

    def forward(self, bow):
        alpha = self.posterior(bow)
        if self.training:
            theta = Dirichlet(alpha).rsample()
        else:
            theta = alpha / alpha.sum(-1, keepdim=True)
        logits = self.dec_bn(self.topic_word(theta))
        log_probs = F.log_softmax(logits, dim=-1)
        recon = -(bow * log_probs).sum(-1)
        kl = dirichlet_kl(alpha, self.prior.expand_as(alpha))
        return recon, kl


def dirichlet_kl(alpha, prior):
    """KL(Dir(alpha) || Dir(prior)), closed form, per row."""
    a0 = alpha.sum(-1)
    p0 = prior.sum(-1)
    t1 = torch.lgamma(a0) - torch.lgamma(alpha).sum(-1)
    t2 = -torch.lgamma(p0) + torch.lgamma(prior).sum(-1)
    t3 = ((alpha - prior) * (torch.digamma(alpha) - torch.digamma(a0).unsqueeze(-1))).sum(-1)
    return t1 + t2 + t3


# --------------------------------------------------------------------------- train / eval
def make_loss_fn(model):
    def elbo_loss(bow, kl_weight):
        recon, kl = model(bow)
        loss = (recon + kl_weight * kl).mean()
        return loss, recon.detach().sum(), kl.detach().sum()

    return torch.compile(elbo_loss, fullgraph=True)


@torch.no_grad()
def heldout_perplexity(model, loader):
    model.eval()
    total_nll, total_words = 0.0, 0.0
    for (bow,) in loader:
        recon, kl = model(bow)
        total_nll += float((recon + kl).sum())
        total_words += float(bow.sum())
    model.train()
    return math.exp(total_nll / total_words)


def top_words(model, k=8):
    w = model.topic_word.weight.detach().t()  # (topics, vocab)
    return [row.topk(k).indices.tolist() for row in w]


def main():
    gen = torch.Generator().manual_seed(1234)
    print(f"torch {torch.__version__}")
    t0 = time.perf_counter()
    bows = make_corpus(N_TRAIN + N_HELDOUT, VOCAB, N_TOPICS, gen)
    train_ds = TensorDataset(bows[:N_TRAIN])
    held_ds = TensorDataset(bows[N_TRAIN:])
    train_loader = DataLoader(train_ds, batch_size=BATCH, shuffle=True, generator=gen)
    held_loader = DataLoader(held_ds, batch_size=EVAL_BATCH, shuffle=False)
    print(f"corpus built in {time.perf_counter() - t0:.1f}s: "
          f"{N_TRAIN} train / {N_HELDOUT} held-out docs, vocab {VOCAB}")

    model = ProdLDA(VOCAB, HIDDEN, N_TOPICS, PRIOR_ALPHA)
    opt = torch.optim.Adam(model.parameters(), lr=LR, betas=(0.99, 0.999))
    loss_fn = make_loss_fn(model)

    steps_per_epoch = len(train_loader)
    total_steps = EPOCHS * steps_per_epoch
    step = 0
    for epoch in range(EPOCHS):
        t_ep = time.perf_counter()
        ep_loss, ep_docs = 0.0, 0
        for (bow,) in train_loader:
            kl_weight = torch.tensor(min(1.0, (step + 1) / (0.5 * total_steps)))
            opt.zero_grad(set_to_none=True)
            t_s = time.perf_counter()
            loss, recon_sum, kl_sum = loss_fn(bow, kl_weight)
            loss.backward()
            opt.step()
            if step == 0:
                print(f"  first step (compile) {time.perf_counter() - t_s:.1f}s, loss {loss.item():.2f}")
            ep_loss += loss.item() * bow.shape[0]
            ep_docs += bow.shape[0]
            step += 1
        ppl = heldout_perplexity(model, held_loader)
        print(f"epoch {epoch + 1}/{EPOCHS}  train loss/doc {ep_loss / ep_docs:8.2f}  "
              f"held-out ppl {ppl:8.1f}  ({time.perf_counter() - t_ep:.1f}s)")

    for t, words in enumerate(top_words(model)[:5]):
        print(f"topic {t:2d}: {words}")
    print(f"done in {time.perf_counter() - t0:.1f}s")


if __name__ == "__main__":
    main()
