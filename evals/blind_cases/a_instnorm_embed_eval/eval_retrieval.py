"""Offline retrieval eval: train the encoder briefly, then compare eager vs compiled
embeddings and recall@k on a synthetic gallery (stand-in for the product crops)."""
import argparse
import logging
import time

import torch
import torch.nn.functional as F

from model import RetrievalEncoder

log = logging.getLogger("retrieval_eval")


def make_gallery(n_classes, per_class, size, seed):
    g = torch.Generator().manual_seed(seed)
    protos = torch.randn(n_classes, 3, size, size, generator=g)
    imgs, labels = [], []
    for c in range(n_classes):
        noise = 0.3 * torch.randn(per_class, 3, size, size, generator=g)
        gain = 0.5 + torch.rand(per_class, 1, 1, 1, generator=g)
        imgs.append(protos[c] * gain + noise)
        labels.append(torch.full((per_class,), c))
    return torch.cat(imgs), torch.cat(labels)


def supcon_loss(emb, labels, temperature=0.1):
    sim = emb @ emb.t() / temperature
    eye = torch.eye(len(labels), dtype=torch.bool)
    sim = sim.masked_fill(eye, -1e4)
    pos = (labels[:, None] == labels[None, :]) & ~eye
    logprob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
    return -(logprob * pos).sum(1).div(pos.sum(1).clamp(min=1)).mean()


def recall_at_k(emb, labels, k):
    sim = emb @ emb.t()
    sim.fill_diagonal_(-2.0)
    topk = sim.topk(k, dim=1).indices
    hit = (labels[topk] == labels[:, None]).any(dim=1)
    return hit.float().mean().item()


@torch.no_grad()
def embed(fn, images, bs):
    return torch.cat([fn(images[i:i + bs]) for i in range(0, len(images), bs)])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--classes", type=int, default=16)
    p.add_argument("--per-class", type=int, default=8)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--min-cos", type=float, default=0.999)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")

    torch.manual_seed(args.seed)
    images, labels = make_gallery(args.classes, args.per_class, args.size, args.seed)
    model = RetrievalEncoder()
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr)

    model.train()
    for step in range(args.steps):
        idx = torch.randperm(len(images))[: args.batch_size * 2]
        loss = supcon_loss(model(images[idx]), labels[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            log.info("step %d loss %.4f", step, loss.item())

    model.eval()
    compiled = torch.compile(model)
    t0 = time.perf_counter()
    emb_c = embed(compiled, images, args.batch_size)
    log.info("compiled embedding pass %.1fs", time.perf_counter() - t0)
    emb_e = embed(model, images, args.batch_size)

    cos = F.cosine_similarity(emb_e, emb_c, dim=-1)
    for k in (1, 5):
        log.info("recall@%d eager=%.3f compiled=%.3f", k,
                 recall_at_k(emb_e, labels, k), recall_at_k(emb_c, labels, k))
    log.info("eager-vs-compiled cosine: min=%.4f mean=%.4f  max|diff|=%.3e",
             cos.min().item(), cos.mean().item(), (emb_e - emb_c).abs().max().item())
    if cos.min().item() < args.min_cos:
        log.error("PARITY FAIL: compiled embeddings diverge from eager (min cos %.4f < %.3f)",
                  cos.min().item(), args.min_cos)
        raise SystemExit(1)
    log.info("PARITY OK")


if __name__ == "__main__":
    main()
