import torch

# categorical columns the ranking model knows about: name -> vocabulary size
CATEGORICAL = {
    "country": 40,
    "device_type": 6,
    "plan_tier": 5,
    "signup_channel": 12,
    "app_version": 30,
    "weekday": 7,
}
NUMERIC = ["tenure_days", "sessions_7d", "spend_30d"]
# columns the warehouse export carries along but the model must not see
PASSTHROUGH = ["user_id", "event_ts"]


def make_dataset(n, seed):
    """Synthetic churn table shaped like the nightly warehouse export."""
    g = torch.Generator().manual_seed(seed)
    truth = torch.Generator().manual_seed(1234)  # same ground-truth effects for every split
    cols = {}
    logit = torch.full((n,), -0.6)
    for i, (name, vocab) in enumerate(CATEGORICAL.items()):
        ids = torch.randint(0, vocab, (n,), generator=g)
        effect = torch.randn(vocab, generator=truth) * (1.2 if i % 2 == 0 else 0.5)
        cols[name] = ids
        logit += effect[ids]
    # one interaction the MLP has to pick up
    logit += 0.8 * ((cols["plan_tier"] == 0) & (cols["device_type"] < 2)).float()
    num = torch.randn(n, len(NUMERIC), generator=g)
    logit += num @ torch.tensor([-0.7, -0.4, 0.3])
    cols["numeric"] = num
    cols["user_id"] = torch.arange(n)
    cols["event_ts"] = torch.randint(1_700_000_000, 1_760_000_000, (n,), generator=g)
    label = torch.bernoulli(torch.sigmoid(logit), generator=g)
    return cols, label


def batches(cols, label, batch_size, shuffle, seed=0):
    n = len(label)
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)) if shuffle else torch.arange(n)
    for s in range(0, n, batch_size):
        idx = order[s:s + batch_size]
        yield {k: v[idx] for k, v in cols.items()}, label[idx]
