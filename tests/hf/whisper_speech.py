"""Whisper speech-to-text: log-mel features in, decoder logits out (teacher forcing), eval."""
import torch
from transformers import WhisperConfig, WhisperForConditionalGeneration

torch.manual_seed(0)
config = WhisperConfig(vocab_size=128, num_mel_bins=16, d_model=32, encoder_layers=1, decoder_layers=1,
                       encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64,
                       decoder_ffn_dim=64, max_source_positions=32, max_target_positions=32,
                       pad_token_id=0, bos_token_id=1, eos_token_id=2, decoder_start_token_id=1)
model = WhisperForConditionalGeneration(config).eval()
model = torch.compile(model, backend="eager")

with torch.no_grad():
    for n_tokens in (4, 6):
        features = torch.randn(2, config.num_mel_bins, 2 * config.max_source_positions)  # 64 frames
        decoder_input_ids = torch.randint(3, config.vocab_size, (2, n_tokens))
        logits = model(input_features=features, decoder_input_ids=decoder_input_ids).logits
        print(n_tokens, tuple(logits.shape))
