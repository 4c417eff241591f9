"""What a source hands the exporter (``Loaded``), and the error when it cannot (``SourceError``).

A module of its own so that ``sources.py`` (which picks a source) and the
sources it picks from (``default_gguf.py``, ``tiny.py``) import it without
importing each other.
"""

from dataclasses import dataclass


class SourceError(RuntimeError):
    """A source that is missing, unreachable or not the model it claims to be."""


@dataclass
class Loaded:
    model: object  # a transformers Qwen2ForCausalLM in float32, eval mode
    tokenizer: object  # a transformers PreTrainedTokenizerFast
    meta: dict  # name, source, licence, source_format for the manifest
