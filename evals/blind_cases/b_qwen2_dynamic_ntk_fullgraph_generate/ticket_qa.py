"""Nightly batch job: answer short questions about long support tickets.

Uses our context-extended Qwen2 checkpoint (dynamic NTK RoPE so prompts longer
than the pre-training window still work). For the CI smoke test the checkpoint
is replaced by a tiny random-init model with the same config layout.

    python ticket_qa.py               # torch.compile'd forward (default)
    python ticket_qa.py --no-compile  # eager
"""
import argparse
import statistics
import time
import zlib

import torch
import transformers
from transformers import Qwen2Config, Qwen2ForCausalLM

transformers.logging.set_verbosity_error()

VOCAB = 1000
BOS, EOS, PAD = 1, 2, 0

TICKETS = [
    ("printer on floor 3 drops jobs after the driver update, queue shows paused, "
     "restarting the spooler helps for an hour then the queue pauses again and users "
     "see error 0x0000011b when printing from the finance app", "what fixes the queue"),
    ("vpn disconnects every twenty minutes on the new laptops, only on wifi, cable is "
     "fine, logs show dead peer detection timeout, firmware of the access points was "
     "updated last week by the network team and the issue started the day after that",
     "which change caused it"),
    ("shared mailbox for invoices stopped receiving mail from the supplier portal, "
     "other senders arrive, message trace shows rejected by transport rule added "
     "during the security review", "why are mails rejected"),
    ("build agents run out of disk during nightly builds because docker images are "
     "never pruned, cleanup job was disabled when the agents moved to the new cluster "
     "and nobody re enabled it after the migration was finished", "what should be re enabled"),
]


def encode(text: str) -> list[int]:
    # stand-in for the real tokenizer: stable word -> id mapping
    return [3 + zlib.crc32(w.encode()) % (VOCAB - 3) for w in text.split()]


def build_prompt(ticket: str, question: str) -> torch.Tensor:
    ids = [BOS] + encode("ticket : " + ticket) + encode("question : " + question + " answer :")
    return torch.tensor([ids])


def load_model() -> Qwen2ForCausalLM:
    config = Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=96,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=48,          # pre-training window of the checkpoint
        rope_parameters={"rope_type": "dynamic", "factor": 4.0, "rope_theta": 10000.0},
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=PAD,
        tie_word_embeddings=True,
        initializer_range=0.1,
    )
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(config)
    return model.eval()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=2, help="passes over the ticket queue")
    args = ap.parse_args()

    model = load_model()
    if not args.no_compile:
        # recipe from the transformers "LLM inference optimization" guide;
        # fullgraph=True so a graph break fails CI instead of silently costing latency
        model.forward = torch.compile(model.forward, fullgraph=True)

    latencies = []
    t_job = time.time()
    for rnd in range(args.rounds):
        for i, (ticket, question) in enumerate(TICKETS):
            input_ids = build_prompt(ticket, question)
            t0 = time.time()
            with torch.inference_mode():
                out = model.generate(
                    input_ids=input_ids,
                    attention_mask=torch.ones_like(input_ids),
                    max_new_tokens=args.max_new_tokens,
                    min_new_tokens=args.max_new_tokens,
                    do_sample=False,
                )
            dt = time.time() - t0
            latencies.append(dt)
            answer = out[0, input_ids.shape[1]:].tolist()
            print(f"round {rnd} ticket {i}: prompt {input_ids.shape[1]:3d} tok -> "
                  f"{len(answer)} new tok in {dt:7.2f}s  answer ids {answer[:6]}")
    warm = latencies[len(TICKETS):] or latencies
    print(f"job wall time {time.time() - t_job:.1f}s | first request {latencies[0]:.1f}s | "
          f"median latency after first round {statistics.median(warm) * 1e3:.0f} ms")


if __name__ == "__main__":
    main()
