"""Request option handling for the reranker service.

Clients send a JSON body; anything they leave out falls back to the service defaults.
Options are turned into an immutable record so handlers can't mutate them by accident.
"""
from collections import namedtuple

DEFAULTS = {
    "temperature": 1.0,
    "length_penalty": 0.0,
    "min_score": -1e4,
    "top_k": 10,
}


def parse_options(payload):
    unknown = set(payload) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"unknown option(s): {sorted(unknown)}")
    merged = {**DEFAULTS, **payload}
    merged["temperature"] = float(merged["temperature"])
    merged["length_penalty"] = float(merged["length_penalty"])
    merged["min_score"] = float(merged["min_score"])
    merged["top_k"] = int(merged["top_k"])
    Options = namedtuple("ScoringOptions", list(merged))
    return Options(**merged)
