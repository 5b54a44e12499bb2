import argparse
import time
import torch
from transformers import BertConfig, BertModel


def make_corpus(n_docs, vocab, gen):
    docs = []
    for _ in range(n_docs):
        length = int(torch.randint(12, 48, (1,), generator=gen))
        docs.append(torch.randint(5, vocab, (length,), generator=gen))
    labels = torch.tensor([int(d.float().mean() > vocab / 2) for d in docs])
    return docs, labels


def collate(docs, max_len=48, pad_id=0):
    ids = torch.full((len(docs), max_len), pad_id, dtype=torch.long)
    mask = torch.zeros(len(docs), max_len, dtype=torch.long)
    for i, d in enumerate(docs):
        ids[i, : len(d)] = d
        mask[i, : len(d)] = 1
    return ids, mask


class Encoder:
    def __init__(self, use_compile):
        cfg = BertConfig(
            vocab_size=3000, hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
            intermediate_size=256, max_position_embeddings=64,
        )
        torch.manual_seed(0)
        self.model = BertModel(cfg).eval()
        self.runner = torch.compile(self.model) if use_compile else self.model

    @torch.no_grad()
    def pooled(self, ids, mask):
        out = self.runner(input_ids=ids, attention_mask=mask)
        return out.last_hidden_state[:, 0]

    def warmup(self, batch_size=16):
        ids, mask = collate([torch.randint(5, 3000, (40,))] * batch_size)
        t = time.time()
        self.pooled(ids, mask)
        print(f"warmup done in {time.time() - t:.1f}s")


def capture_layer_means(enc, docs, layers, batch_size=16):
    store = {i: [] for i in layers}
    handles = []
    for i in layers:
        def hook(mod, inp, out, i=i):
            hs = out[0] if isinstance(out, tuple) else out
            store[i].append(hs.mean(dim=1).detach())
        handles.append(enc.model.encoder.layer[i].register_forward_hook(hook))
    try:
        for s in range(0, len(docs), batch_size):
            ids, mask = collate(docs[s : s + batch_size])
            enc.pooled(ids, mask)
    finally:
        for h in handles:
            h.remove()
    feats = {}
    for i in layers:
        if not store[i]:
            raise RuntimeError(f"no activations captured for layer {i} ({len(docs)} docs processed)")
        feats[i] = torch.cat(store[i])
    return feats


def linear_probe(x, y, steps=200):
    w = torch.zeros(x.shape[1], requires_grad=True)
    b = torch.zeros((), requires_grad=True)
    opt = torch.optim.LBFGS([w, b], max_iter=steps)
    x = (x - x.mean(0)) / (x.std(0) + 1e-6)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(x @ w + b, y.float())
        loss.backward()
        return loss

    opt.step(closure)
    return ((x @ w + b > 0).long() == y).float().mean().item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--layers", type=int, nargs="+", default=[1, 2, 3])
    args = ap.parse_args()

    gen = torch.Generator().manual_seed(0)
    docs, labels = make_corpus(128, 3000, gen)
    enc = Encoder(args.compile)
    enc.warmup()

    feats = capture_layer_means(enc, docs, args.layers)
    for i in args.layers:
        print(f"layer {i}: features {tuple(feats[i].shape)}  probe acc={linear_probe(feats[i], labels):.3f}")


if __name__ == "__main__":
    main()
