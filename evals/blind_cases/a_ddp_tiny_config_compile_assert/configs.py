from dataclasses import dataclass


@dataclass(frozen=True)
class ModelConfig:
    vocab_size: int
    d_model: int
    n_layers: int
    n_heads: int
    seq_len: int
    mlp_ratio: int = 4
    dropout: float = 0.0


@dataclass(frozen=True)
class TrainConfig:
    model: ModelConfig
    micro_batch: int
    lr: float
    weight_decay: float
    warmup_steps: int
    ddp_target_buckets: int = 4


CONFIGS = {
    # 8x A100, NCCL
    "base": TrainConfig(
        model=ModelConfig(vocab_size=32000, d_model=1024, n_layers=24, n_heads=16, seq_len=1024),
        micro_batch=8, lr=3e-4, weight_decay=0.1, warmup_steps=2000,
    ),
    # CI smoke test: 2 CPU ranks, gloo
    "tiny": TrainConfig(
        model=ModelConfig(vocab_size=2048, d_model=128, n_layers=2, n_heads=4, seq_len=64),
        micro_batch=4, lr=1e-3, weight_decay=0.0, warmup_steps=2,
    ),
}
