from dataclasses import dataclass


@dataclass
class EncoderConfig:
    vocab_size: int = 1000
    hidden_size: int = 64
    num_heads: int = 4
    num_layers: int = 2
    intermediate_size: int = 128
    max_position_embeddings: int = 512
    # rotary tables are built lazily; start small so short-query serving stays light
    rope_initial_cache_len: int = 128
    rope_theta: float = 10000.0
    embed_dim: int = 32
