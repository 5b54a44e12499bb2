import argparse
import time
import torch
from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM


def build_model():
    cfg = LlamaConfig(
        vocab_size=4000, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
        bos_token_id=1, eos_token_id=2, pad_token_id=0,
    )
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).eval()


def make_prompts(n, length, gen):
    return torch.randint(3, 4000, (n, length), generator=gen)


def run(model, prompts, gen_cfg, rounds):
    times = []
    out = None
    for r in range(rounds):
        t = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(prompts, generation_config=gen_cfg)
        times.append(time.perf_counter() - t)
    return out, times


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=32)
    args = ap.parse_args()

    gen = torch.Generator().manual_seed(0)
    prompts = make_prompts(2, 24, gen)
    gen_cfg = GenerationConfig(max_new_tokens=args.new_tokens, do_sample=False, pad_token_id=0, eos_token_id=None)

    model = build_model()
    ref, eager_t = run(model, prompts, gen_cfg, args.rounds)

    compiled = torch.compile(model, mode="max-autotune-no-cudagraphs")
    out, comp_t = run(compiled, prompts, gen_cfg, args.rounds)

    n_tok = prompts.shape[0] * args.new_tokens
    print(f"eager    : first {eager_t[0]:.2f}s  steady {min(eager_t[1:]):.2f}s  ({n_tok / min(eager_t[1:]):.0f} tok/s)")
    print(f"compiled : first {comp_t[0]:.2f}s  steady {min(comp_t[1:]):.2f}s  ({n_tok / min(comp_t[1:]):.0f} tok/s)")
    print("same tokens:", torch.equal(ref, out))
    speedup = min(eager_t[1:]) / min(comp_t[1:])
    print(f"speedup: {speedup:.2f}x")


if __name__ == "__main__":
    main()
