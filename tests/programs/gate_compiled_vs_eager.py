"""A CI-style gate: compiled vs eager at a fixed tolerance, prints MISMATCH and exits 1.
usage: gate_compiled_vs_eager.py DTYPE MODEL [DEVICE]   (float32|float16|bfloat16, mlp|bert|gpt2, cpu|cuda)
float32 is gated at atol=1e-7, rtol=0; float16/bfloat16 at atol=rtol=1e-4: tighter than the
dtype's rounding, so the gate fails although compiled is as accurate as eager."""
import sys

import torch

dtype = getattr(torch, sys.argv[1] if len(sys.argv) > 1 else "float32")
kind = sys.argv[2] if len(sys.argv) > 2 else "mlp"
device = sys.argv[3] if len(sys.argv) > 3 else "cpu"
torch.manual_seed(0)
if kind == "mlp":
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(), torch.nn.LayerNorm(256),
                                torch.nn.Linear(256, 64))
    inputs = (torch.randn(32, 64),)
else:
    import transformers
    if kind == "bert":
        cfg = transformers.BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                      intermediate_size=128, max_position_embeddings=64)
        model = transformers.BertModel(cfg)
    else:
        cfg = transformers.GPT2Config(vocab_size=512, n_embd=64, n_layer=2, n_head=4, n_positions=64,
                                      bos_token_id=0, eos_token_id=0)
        model = transformers.GPT2Model(cfg)
    inputs = (torch.randint(0, 512, (2, 32)),)
model = model.to(device, dtype).eval()
inputs = tuple((x.to(dtype) if x.is_floating_point() else x).to(device) for x in inputs)


def out_of(r):
    return r if isinstance(r, torch.Tensor) else r.last_hidden_state


with torch.no_grad():
    ref = out_of(model(*inputs))
    got = out_of(torch.compile(model)(*inputs))
atol, rtol = (1e-7, 0.0) if dtype == torch.float32 else (1e-4, 1e-4)
diff = (got.float() - ref.float()).abs().max().item()
if not torch.allclose(got, ref, atol=atol, rtol=rtol):
    print(f"MISMATCH: compiled vs eager max abs diff {diff:.3g} > atol {atol:g} ({sys.argv[1:]})")
    sys.exit(1)
print(f"ok: max abs diff {diff:.3g}")
