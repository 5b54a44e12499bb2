"""Package the substation load anomaly scorer for the serving fleet.

Trains a small Informer forecaster on hourly feeder-load windows, checks it on a
holdout split, then exports the scoring graph with torch.export so the serving
side can load the .pt2 without the training code.
"""
import math
import os
import time

import torch
import torch.nn as nn
from transformers import InformerConfig, InformerForPrediction

torch.manual_seed(7)

CONTEXT = 48          # hours of history the model sees
HORIZON = 12          # hours scored per request
LAGS = [1, 2, 3, 24]
N_TIME_FEATS = 4      # hour-of-day sin/cos, day-of-week sin/cos
SERVE_BATCH = 8
OUT_DIR = os.environ.get("OUT_DIR", "artifacts")


def build_config():
    return InformerConfig(
        prediction_length=HORIZON,
        context_length=CONTEXT,
        lags_sequence=LAGS,
        num_time_features=N_TIME_FEATS,
        distribution_output="student_t",
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        dropout=0.05,
        attention_type="full",
    )


def time_features(start_hour, length):
    h = torch.arange(length, dtype=torch.float32)[None, :] + start_hour[:, None]
    hod = (h % 24) / 24.0 * 2 * math.pi
    dow = ((h // 24) % 7) / 7.0 * 2 * math.pi
    return torch.stack([hod.sin(), hod.cos(), dow.sin(), dow.cos()], dim=-1)


def synth_load(n_series, length, gen):
    """Feeder load in MW: base level, daily + weekly cycle, noise."""
    start = torch.randint(0, 24 * 7, (n_series,), generator=gen).float()
    base = 20 + 30 * torch.rand(n_series, 1, generator=gen)
    h = torch.arange(length, dtype=torch.float32)[None, :] + start[:, None]
    daily = 0.25 * torch.sin(2 * math.pi * (h % 24) / 24 - 1.2)
    weekly = 0.08 * torch.cos(2 * math.pi * (h % 168) / 168)
    noise = 0.03 * torch.randn(n_series, length, generator=gen)
    return base * (1 + daily + weekly + noise), start


def make_batch(n, gen):
    past_len = CONTEXT + max(LAGS)
    total = past_len + HORIZON
    y, start = synth_load(n, total, gen)
    tf = time_features(start, total)
    return {
        "past_values": y[:, :past_len],
        "past_time_features": tf[:, :past_len],
        "past_observed_mask": torch.ones(n, past_len),
        "future_values": y[:, past_len:],
        "future_time_features": tf[:, past_len:],
    }


class ScoringGraph(nn.Module):
    """What the serving side runs: distribution params for the observed horizon."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, past_values, past_time_features, past_observed_mask,
                future_values, future_time_features):
        out = self.model(
            past_values=past_values,
            past_time_features=past_time_features,
            past_observed_mask=past_observed_mask,
            future_values=future_values,
            future_time_features=future_time_features,
            return_dict=True,
        )
        df, loc, scale = out.params
        return df, loc, scale, out.loc, out.scale


def anomaly_scores(model, df, loc, scale, data_loc, data_scale, future_values):
    distr = model.output_distribution((df, loc, scale), loc=data_loc, scale=data_scale)
    nll = -distr.log_prob(future_values)
    return nll.mean(dim=-1)


def train(model, steps=40, batch=16):
    gen = torch.Generator().manual_seed(0)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    model.train()
    for step in range(1, steps + 1):
        b = make_batch(batch, gen)
        loss = model(**b).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0:
            print(f"step {step:3d}  nll {loss.item():.4f}")
    model.eval()


@torch.no_grad()
def holdout_nll(model, n_batches=4):
    gen = torch.Generator().manual_seed(123)
    tot = 0.0
    for _ in range(n_batches):
        tot += model(**make_batch(SERVE_BATCH, gen)).loss.item()
    return tot / n_batches


def main():
    t0 = time.time()
    cfg = build_config()
    model = InformerForPrediction(cfg)
    print(f"params: {sum(p.numel() for p in model.parameters()) / 1e3:.1f}k")

    train(model)
    print(f"holdout nll: {holdout_nll(model):.4f}")

    scorer = ScoringGraph(model).eval()
    example = make_batch(SERVE_BATCH, torch.Generator().manual_seed(999))
    args = (example["past_values"], example["past_time_features"], example["past_observed_mask"],
            example["future_values"], example["future_time_features"])

    with torch.no_grad():
        ref = scorer(*args)
        ref_scores = anomaly_scores(model, *ref[:3], ref[3], ref[4], example["future_values"])

    print("exporting scoring graph ...")
    ep = torch.export.export(scorer, args)

    with torch.no_grad():
        got = ep.module()(*args)
        got_scores = anomaly_scores(model, *got[:3], got[3], got[4], example["future_values"])
    max_diff = (got_scores - ref_scores).abs().max().item()
    print(f"exported vs eager max |score diff|: {max_diff:.2e}")
    if max_diff > 1e-4:
        raise SystemExit("exported scorer does not match eager; not publishing")

    os.makedirs(OUT_DIR, exist_ok=True)
    path = os.path.join(OUT_DIR, "load_anomaly_scorer.pt2")
    torch.export.save(ep, path)
    print(f"saved {path}  ({time.time() - t0:.1f}s)")


if __name__ == "__main__":
    main()
