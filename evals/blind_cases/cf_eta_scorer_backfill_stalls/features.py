"""Feature assembly for the delivery-ETA scorer.

Two sources feed the scorer:
  * online requests arrive as JSON rows (one dict per order) and are micro-batched;
  * the nightly backfill reads whole partitions from the columnar feature store.
"""
import numpy as np
import torch

NUMERIC = [
    "distance_km", "prep_minutes", "courier_speed", "traffic_idx", "rain_mm",
    "temp_c", "basket_items", "basket_value", "store_load", "courier_load",
    "hour_sin", "hour_cos",
]
CATEGORICAL = {"city_id": 40, "vehicle": 4, "store_tier": 6}
STORE_BLOCK_WIDTH = 16   # the store keeps 4 reserved float columns after the numeric block


def _fake_numeric(rng, n):
    x = rng.normal(size=(n, len(NUMERIC)))
    x[:, 0] = np.abs(x[:, 0]) * 3.0 + 0.5
    x[:, 1] = np.abs(x[:, 1]) * 8.0 + 2.0
    return x


def make_online_rows(rng, n):
    """What the HTTP handler hands us: a list of per-order dicts."""
    num = _fake_numeric(rng, n)
    rows = []
    for i in range(n):
        r = {k: float(num[i, j]) for j, k in enumerate(NUMERIC)}
        for k, card in CATEGORICAL.items():
            r[k] = int(rng.integers(0, card))
        rows.append(r)
    return rows


def rows_to_tensors(rows):
    num = np.array([[r[k] for k in NUMERIC] for r in rows], dtype=np.float32)
    cat = np.array([[r[k] for k in CATEGORICAL] for r in rows], dtype=np.int64)
    return torch.from_numpy(num), torch.from_numpy(cat)


def read_store_partition(rng, n):
    """Columnar store: one array per column, as the parquet reader returns them."""
    num = _fake_numeric(rng, n)
    cols = {k: num[:, j].astype(np.float32) for j, k in enumerate(NUMERIC)}
    for j in range(STORE_BLOCK_WIDTH - len(NUMERIC)):
        cols[f"reserved_{j}"] = np.zeros(n, dtype=np.float32)
    for k, card in CATEGORICAL.items():
        cols[k] = rng.integers(0, card, size=n).astype(np.int64)
    return cols


def partition_to_tensors(cols, packed_block=False):
    if packed_block:
        # newer partitions ship the numeric block pre-packed (n, 16), row-major
        block = np.stack([cols[k] for k in cols if cols[k].dtype == np.float32], axis=1)
        num = block[:, : len(NUMERIC)]
    else:
        num = np.array([cols[k] for k in NUMERIC]).T
    cat = np.array([cols[k] for k in CATEGORICAL]).T
    return torch.from_numpy(num), torch.from_numpy(cat)
