"""Small transformer forecaster for 1 Hz plant sensor data.

Timestamps are carried as int64 nanoseconds since the Unix epoch (same as the
pandas / parquet export from the historian), and calendar features for the
forecast horizon are derived inside the model so that serving only needs the
history window and the timestamp of its last sample.
"""
import math

import torch
import torch.nn as nn

NS_PER_SEC = 1_000_000_000
SEC_PER_MIN = 60
SEC_PER_HOUR = 3600
SEC_PER_DAY = 86400


class CalendarEmbedding(nn.Module):
    """second-of-minute, minute-of-hour, hour-of-day and day-of-week embeddings."""

    def __init__(self, d_model: int):
        super().__init__()
        self.second = nn.Embedding(60, d_model)
        self.minute = nn.Embedding(60, d_model)
        self.hour = nn.Embedding(24, d_model)
        self.weekday = nn.Embedding(7, d_model)

    def forward(self, ts_ns: torch.Tensor) -> torch.Tensor:
        secs = torch.div(ts_ns, NS_PER_SEC, rounding_mode="floor")
        sec_of_min = secs % SEC_PER_MIN
        min_of_hour = torch.div(secs, SEC_PER_MIN, rounding_mode="floor") % 60
        hour_of_day = torch.div(secs, SEC_PER_HOUR, rounding_mode="floor") % 24
        # 1970-01-01 was a Thursday
        weekday = (torch.div(secs, SEC_PER_DAY, rounding_mode="floor") + 3) % 7
        return (self.second(sec_of_min) + self.minute(min_of_hour)
                + self.hour(hour_of_day) + self.weekday(weekday))


class SensorForecaster(nn.Module):
    def __init__(self, n_sensors: int, horizon: int, d_model: int = 64,
                 n_heads: int = 4, n_layers: int = 2, step_seconds: int = 1):
        super().__init__()
        self.horizon = horizon
        self.step_ns = step_seconds * NS_PER_SEC
        self.in_proj = nn.Linear(n_sensors, d_model)
        self.calendar = CalendarEmbedding(d_model)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, dim_feedforward=4 * d_model,
                                           dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.query = nn.Parameter(torch.randn(1, horizon, d_model) / math.sqrt(d_model))
        self.cross = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.head = nn.Sequential(nn.LayerNorm(d_model), nn.Linear(d_model, n_sensors))

    def forward(self, history: torch.Tensor, last_ts_ns: torch.Tensor):
        # history: (B, L, n_sensors) float32, last_ts_ns: (B,) int64
        # returns the forecast (B, horizon, n_sensors) and its timestamps (B, horizon) so the
        # serving layer can write rows without recomputing the time index
        B, L, _ = history.shape
        hist_offsets = torch.arange(-(L - 1), 1, device=history.device) * self.step_ns
        hist_ts = last_ts_ns[:, None] + hist_offsets
        mem = self.encoder(self.in_proj(history) + self.calendar(hist_ts))

        fut_offsets = torch.arange(1, self.horizon + 1, device=history.device) * self.step_ns
        fut_ts = last_ts_ns[:, None] + fut_offsets
        q = self.query.expand(B, -1, -1) + self.calendar(fut_ts)
        out, _ = self.cross(q, mem, mem, need_weights=False)
        return self.head(out) + history[:, -1:, :], fut_ts
