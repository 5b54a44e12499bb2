"""GPT-2 language-model training: AdamW, loss.backward(), and sequence length that changes
between steps (packed batches of different lengths)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

torch.manual_seed(0)
config = GPT2Config(vocab_size=128, n_positions=64, n_embd=32, n_layer=1, n_head=2)
model = GPT2LMHeadModel(config)
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
cmodel = torch.compile(model, backend="aot_eager")

for step, seq_len in enumerate((16, 24, 32)):
    input_ids = torch.randint(0, config.vocab_size, (2, seq_len))
    out = cmodel(input_ids=input_ids, labels=input_ids)
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} seq {seq_len} loss {out.loss.item():.4f}")
