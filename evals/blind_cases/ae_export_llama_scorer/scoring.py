"""Sequence log-likelihood scoring shared by the eager path and the exported artifact."""
import torch
import torch.nn.functional as F


def sequence_logprobs(logits: torch.Tensor, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Sum of next-token log-probs per sequence (right-padded batches)."""
    logp = F.log_softmax(logits[:, :-1].float(), dim=-1)
    tgt = input_ids[:, 1:]
    tok_lp = logp.gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    valid = attention_mask[:, 1:].to(tok_lp.dtype)
    return (tok_lp * valid).sum(-1)


def make_batch(lengths, vocab_size, pad_id, gen):
    """Right-padded random token batch with matching attention mask."""
    max_len = max(lengths)
    ids = torch.full((len(lengths), max_len), pad_id, dtype=torch.long)
    mask = torch.zeros((len(lengths), max_len), dtype=torch.long)
    for i, L in enumerate(lengths):
        ids[i, :L] = torch.randint(3, vocab_size, (L,), generator=gen)
        mask[i, :L] = 1
    return ids, mask
