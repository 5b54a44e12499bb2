"""Nightly held-out perplexity report for the small in-house Llama checkpoint.

Runs on the CPU eval pool.  The model uses FlexAttention so that the same
attention path is used in training (packed documents) and in evaluation.
"""
import json
import math
import time

import torch
import torch.nn.functional as F
from transformers import LlamaConfig, LlamaForCausalLM

SEQ_LEN = 64
BATCH = 4
N_BATCHES = 6
VOCAB = 1024
PAD_ID = 0
BOS_ID = 1


def build_model(seed: int = 0) -> LlamaForCausalLM:
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=PAD_ID,
        bos_token_id=BOS_ID,
        tie_word_embeddings=True,
        attn_implementation="flex_attention",
    )
    model = LlamaForCausalLM(cfg)
    return model


class HeldOutSet:
    """Synthetic stand-in for the held-out shard: variable-length docs, right padded."""

    def __init__(self, n_batches: int, batch: int, seq_len: int, seed: int = 123):
        g = torch.Generator().manual_seed(seed)
        self.batches = []
        for _ in range(n_batches):
            lengths = torch.randint(seq_len // 2, seq_len + 1, (batch,), generator=g)
            ids = torch.full((batch, seq_len), PAD_ID, dtype=torch.long)
            mask = torch.zeros((batch, seq_len), dtype=torch.long)
            for i, n in enumerate(lengths.tolist()):
                ids[i, 0] = BOS_ID
                ids[i, 1:n] = torch.randint(2, VOCAB, (n - 1,), generator=g)
                mask[i, :n] = 1
            self.batches.append({"input_ids": ids, "attention_mask": mask})

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


def sequence_nll(logits: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor):
    """Sum of token NLL and number of predicted tokens, per sequence."""
    shift_logits = logits[:, :-1, :].float()
    shift_labels = input_ids[:, 1:]
    shift_mask = attention_mask[:, 1:].float()
    tok_nll = F.cross_entropy(
        shift_logits.reshape(-1, shift_logits.size(-1)),
        shift_labels.reshape(-1),
        reduction="none",
    ).view_as(shift_mask)
    return (tok_nll * shift_mask).sum(dim=1), shift_mask.sum(dim=1)


def evaluate(model: LlamaForCausalLM, data: HeldOutSet) -> dict:
    model.eval()
    total_nll, total_tok = 0.0, 0.0
    per_batch = []
    t0 = time.perf_counter()
    for step, batch in enumerate(data):
        out = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            use_cache=False,
        )
        nll, ntok = sequence_nll(out.logits, batch["input_ids"], batch["attention_mask"])
        total_nll += nll.sum().item()
        total_tok += ntok.sum().item()
        per_batch.append(nll.sum().item() / ntok.sum().item())
        print(f"  batch {step}: mean nll/token {per_batch[-1]:.4f}")
    elapsed = time.perf_counter() - t0
    mean_nll = total_nll / total_tok
    return {
        "tokens": int(total_tok),
        "mean_nll": mean_nll,
        "ppl": math.exp(mean_nll),
        "eval_seconds": round(elapsed, 2),
    }


def main():
    print(f"torch {torch.__version__}")
    model = build_model()
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {n_params / 1e6:.2f}M params, attn={model.config._attn_implementation}")
    data = HeldOutSet(N_BATCHES, BATCH, SEQ_LEN)
    report = evaluate(model, data)
    # random-init weights: perplexity should sit near the vocab size
    print(json.dumps(report, indent=2))
    assert math.isfinite(report["ppl"]), "non-finite perplexity"
    assert report["ppl"] < 4 * VOCAB, "perplexity far above a uniform model"
    print("nightly eval: OK")


if __name__ == "__main__":
    main()
