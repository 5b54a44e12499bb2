"""T5 encoder-decoder: a seq2seq training step (labels -> loss) with model.compile()."""
import torch
from transformers import T5Config, T5ForConditionalGeneration

torch.manual_seed(0)
config = T5Config(vocab_size=128, d_model=32, d_kv=16, d_ff=64, num_layers=1, num_decoder_layers=1,
                  num_heads=2, decoder_start_token_id=0, pad_token_id=0)
model = T5ForConditionalGeneration(config)
model.compile(backend="eager")
opt = torch.optim.SGD(model.parameters(), lr=0.01)

for step in range(2):
    input_ids = torch.randint(1, config.vocab_size, (2, 12))
    labels = torch.randint(1, config.vocab_size, (2, 8))
    loss = model(input_ids=input_ids, labels=labels).loss
    loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step {step} loss {loss.item():.4f}")
