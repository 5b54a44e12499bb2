"""BART summarizer-style forward asking for attention maps (output_attentions=True), a config
flag that sends the library down another code path (eager attention)."""
import torch
from transformers import BartConfig, BartForConditionalGeneration

torch.manual_seed(0)
config = BartConfig(vocab_size=128, d_model=32, encoder_layers=2, decoder_layers=2,
                    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                    decoder_ffn_dim=64, max_position_embeddings=64)
model = BartForConditionalGeneration(config).eval()
model = torch.compile(model, backend="eager")

with torch.no_grad():
    for _ in range(2):
        input_ids = torch.randint(3, config.vocab_size, (2, 12))
        decoder_input_ids = torch.randint(3, config.vocab_size, (2, 6))
        out = model(input_ids=input_ids, decoder_input_ids=decoder_input_ids, output_attentions=True)
        print(len(out.encoder_attentions), [a is None for a in out.encoder_attentions])
