"""Nightly candidate scoring for the session recommender (SASRec-style encoder).

For each user we encode the last MAX_HIST item ids, pool to a user vector and
score the whole catalogue; top-10 goes to the feed service.  The encoder is run
through torch.compile since the job scores a few million users on CPU nodes.
"""
import argparse
import time

import torch
import torch.nn as nn

N_ITEMS, D, MAX_HIST, PAD = 5000, 64, 20, 0


class SeqRec(nn.Module):
    def __init__(self):
        super().__init__()
        self.item_emb = nn.Embedding(N_ITEMS, D, padding_idx=PAD)
        self.pos_emb = nn.Embedding(MAX_HIST, D)
        layer = nn.TransformerEncoderLayer(d_model=D, nhead=4, dim_feedforward=4 * D, dropout=0.1,
                                           batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2)
        self.out_norm = nn.LayerNorm(D)

    def forward(self, hist):  # hist: [B, MAX_HIST] item ids, PAD = no item
        pad_mask = hist == PAD
        pos = torch.arange(hist.shape[1], device=hist.device)
        h = self.item_emb(hist) + self.pos_emb(pos)[None]
        h = self.encoder(h, src_key_padding_mask=pad_mask)
        keep = (~pad_mask).unsqueeze(-1).to(h.dtype)
        user = (h * keep).sum(1) / keep.sum(1).clamp(min=1.0)
        user = self.out_norm(user)
        return user @ self.item_emb.weight.T  # [B, N_ITEMS]


def make_users(n, seed):
    g = torch.Generator().manual_seed(seed)
    hist = torch.randint(1, N_ITEMS, (n, MAX_HIST), generator=g)
    lengths = torch.randint(0, MAX_HIST + 1, (n,), generator=g)  # 0 = brand-new user, no history yet
    hist[torch.arange(MAX_HIST)[None, :] >= lengths[:, None]] = PAD
    target = torch.randint(1, N_ITEMS, (n,), generator=g)
    return hist, target


@torch.no_grad()
def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    torch.manual_seed(0)
    model = SeqRec().eval()
    # (production: model.load_state_dict(torch.load("seqrec_2024w38.pt")))
    scorer = model if args.no_compile else torch.compile(model)

    t0 = time.time()
    n_users = n_nan = 0
    top1_hist = torch.zeros(N_ITEMS, dtype=torch.long)
    for b in range(8):
        hist, target = make_users(256, seed=b)
        scores = scorer(hist)
        scores[:, PAD] = float("-inf")
        top10 = scores.topk(10, dim=1).indices
        n_nan += torch.isnan(scores).any(1).sum().item()
        n_users += hist.shape[0]
        top1_hist += torch.bincount(top10[:, 0], minlength=N_ITEMS)
    print(f"scored {n_users} users in {time.time() - t0:.1f}s")
    print(f"users with NaN scores: {n_nan}")
    print(f"most frequent top-1 item: {top1_hist.argmax().item()} (served to {top1_hist.max().item()} users)")


if __name__ == "__main__":
    main()
