"""Peers for the browser benchmark: the same passes, on the same token ids, in two other in-browser runtimes.

    .venv/bin/python -m benchmarks.peers [--source default]     (the peers alone; bench_browser.py prints them too)

- wllama (llama.cpp compiled to WASM) on the very GGUF our exporter starts from
  (``model_export.sources.fetch_default_gguf``). wllama 3 dropped its low-level
  decode API, so a pass is a one-token completion against llama-server's prompt
  cache, timed by the server's own ``prompt_ms``; its prompts are texts that
  re-tokenise to our ids, since a token-id prompt crashes wllama 3.8.1 (see
  peers/wllama.js);
- transformers.js on the stock int8 quantisation of our float32 export
  (onnxruntime's ``quantize_dynamic``, QInt8 weights), passes timed around the
  model's forward with ``past_key_values`` (see peers/transformers-worker.js).

Both run in the same headless Chromium as ours, from localhost only, each on a
small page in benchmarks/peers/ served by tools/serve.py with the
cross-origin-isolation headers threads need. The passes are ours (see
model_export.check.speed): decode-1 and verify-6 after a 32-token past,
prefill-30 from empty, medians after warm-ups.
"""

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright
from tokenizers import Tokenizer

from benchmarks.memory import MemorySampler
from model_export.cache import cache_root
from model_export.gguf_fields import read_fields
from model_export.sources import fetch_default_gguf, read_gguf_metadata
from tools.site import CHROMIUM, CHROMIUM_ARGS, LOCAL_HOSTS, Server

ROOT = Path(__file__).resolve().parent.parent

# What transformers.js looks for in a model folder, besides the graph.
HF_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json")
QUANTISED = "onnx/model_quantized.onnx"  # the file transformers.js picks for dtype "q8"


def stock_int8_folder(export_folder: Path, log=print) -> Path:
    """The HF-style folder transformers.js loads: our float32 graph, quantised the stock way; cached per export."""
    target = cache_root() / "peers" / export_folder.name / "stock-int8"
    if all((target / name).is_file() for name in (*HF_FILES, QUANTISED)):
        return target
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    (partial / "onnx").mkdir(parents=True)
    manifest = json.loads((export_folder / "manifest.json").read_text())
    gguf = read_gguf_metadata(read_fields(fetch_default_gguf()))
    for name, content in hf_config(manifest, gguf).items():
        (partial / name).write_text(json.dumps(content, indent=2))
    shutil.copyfile(export_folder / "tokenizer.json", partial / "tokenizer.json")
    log(f"quantising {export_folder / 'reference' / 'model_fp32.onnx'} (quantize_dynamic, QInt8)")
    began = time.perf_counter()
    quantise(export_folder / "reference" / "model_fp32.onnx", partial / QUANTISED)
    log(f"quantised in {time.perf_counter() - began:.0f} s")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)
    return target


def quantise(source: Path, target: Path) -> None:
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic

    # Stock means stock: every option at its default, only the weight type named, and one extra option
    # without which it stops: onnx's shape inference gives the outputs of com.microsoft FusedMatMul
    # (our attention) no type, and the quantiser then asks to be told that untyped tensors are float32.
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        staged = Path(scratch) / target.name
        quantize_dynamic(source, staged, weight_type=QuantType.QInt8,
                         extra_options={"DefaultTensorType": TensorProto.FLOAT})
        staged.rename(target)


def hf_config(manifest: dict, gguf: dict) -> dict[str, dict]:
    """config.json, generation_config.json and tokenizer_config.json as transformers' Qwen2 classes name them.

    The shape comes from our manifest; what the manifest does not hold (feed-forward width,
    RoPE base, norm epsilon, context length) from the source GGUF's own metadata.
    """
    model, kv, special = manifest["model"], manifest["kv"], manifest["special_ids"]
    eos, pad = manifest["eos_ids"], special["<|endoftext|>"]
    bos = gguf.get("tokenizer.ggml.bos_token_id", pad)
    config = {
        "architectures": ["Qwen2ForCausalLM"],
        "model_type": model["architecture"],
        "num_hidden_layers": model["num_layers"],
        "hidden_size": model["hidden_size"],
        "num_attention_heads": model["num_attention_heads"],
        "num_key_value_heads": kv["num_kv_heads"],
        "head_dim": kv["head_dim"],
        "vocab_size": manifest["vocab_size"],
        "tie_word_embeddings": model["tied_embeddings"],
        "intermediate_size": gguf["qwen2.feed_forward_length"],
        "max_position_embeddings": gguf["qwen2.context_length"],
        # GGUF stores the epsilon as float32: 9.999999974752427e-07 is 1e-06.
        "rms_norm_eps": float(f"{gguf['qwen2.attention.layer_norm_rms_epsilon']:.7g}"),
        "rope_theta": gguf["qwen2.rope.freq_base"],
        "hidden_act": "silu",
        "use_cache": True,
        "torch_dtype": "float32",
        "bos_token_id": bos,
        "eos_token_id": eos,
    }
    generation = {"bos_token_id": bos, "eos_token_id": eos, "pad_token_id": pad}
    names = {value: key for key, value in special.items()}
    tokenizer = {
        "tokenizer_class": "Qwen2Tokenizer",
        "bos_token": None,
        "eos_token": names[eos[-1]],
        "pad_token": names[pad],
        "add_bos_token": False,
        "clean_up_tokenization_spaces": False,
        "model_max_length": gguf["qwen2.context_length"],
    }
    return {"config.json": config, "generation_config.json": generation, "tokenizer_config.json": tokenizer}


PAGES = Path(__file__).with_name("peers")
NODE_MODULES = ROOT / "node_modules"
# What the peer pages import, from node_modules (never a CDN). transformers.js bundles its own onnxruntime-web
# and fetches the matching WASM build: that is the copy nested under it, not ours.
LIBRARIES = {
    "wllama": NODE_MODULES / "@wllama" / "wllama" / "esm",
    "transformers": NODE_MODULES / "@huggingface" / "transformers" / "dist",
    "ort": NODE_MODULES / "@huggingface" / "transformers" / "node_modules" / "onnxruntime-web" / "dist",
}
# tools/serve.py sends these (it reads a Netlify-style _headers file): cross-origin isolation, for WASM threads.
HEADERS = """/*
  Cross-Origin-Opener-Policy: same-origin
  Cross-Origin-Embedder-Policy: require-corp
  Cache-Control: no-cache
"""
THREADS = (1, 2)
WARMUPS, REPEATS = 2, 7
PAST = 32  # tokens before decode-1 and verify-6, as in model_export.check.speed
LOAD_TIMEOUT_MS = 600_000


def serve_folder(folder: Path, gguf: Path, stock: Path) -> Path:
    """The folder the peer pages are served from: the pages, their libraries and the two models, all symlinked."""
    for page in PAGES.iterdir():
        (folder / page.name).symlink_to(page)
    (folder / "lib").mkdir()
    for name, path in LIBRARIES.items():
        (folder / "lib" / name).symlink_to(path)
    (folder / "models").mkdir()
    (folder / "models" / "model.gguf").symlink_to(gguf)
    (folder / "models" / "stock-int8").symlink_to(stock)
    (folder / "_headers").write_text(HEADERS)
    return folder


def prompt_texts(tokenizer, ids: list[int]) -> dict:
    """The passes' prompts as texts, for wllama (which crashes on token ids), checked to re-tokenise to ``ids``."""
    counts = {"past": PAST, "decode": PAST + 1, "verify": PAST + 6, "prefill": 30}
    texts = {name: tokenizer.decode(ids[:count], skip_special_tokens=False) for name, count in counts.items()}
    for name, text in texts.items():
        if tokenizer.encode(text).ids != ids[:counts[name]]:
            raise ValueError(f"the {name} prompt's text does not re-tokenise to the same ids")
    return {"texts": texts, "counts": counts}


def open_peer(context, url: str, threads: int, log=print) -> tuple[object, dict]:
    page = context.new_page()
    page.on("console", lambda message: message.type in ("error", "warning") and log(f"[{message.type}] {message.text}"))
    page.set_default_timeout(LOAD_TIMEOUT_MS)
    page.goto(url)
    page.wait_for_function("() => window.peer !== undefined")
    return page, page.evaluate("(threads) => window.peer.load(threads)", threads)


def rounded(values: dict) -> dict:
    return {key: round(value, 2) if isinstance(value, float) else rounded(value) if isinstance(value, dict) else value
            for key, value in values.items()}


def peer_run(context, url: str, inputs: dict, log=print) -> dict:
    """One peer in a fresh profile: a load from localhost (which fills its cache), then per thread count a load
    (from that cache, where the peer keeps one) and the passes; memory sampled around each load and each set of
    passes (the "run")."""
    outside: list[str] = []
    context.on("request", lambda request: urlparse(request.url).hostname not in LOCAL_HOSTS
               and request.url.startswith("http") and outside.append(request.url))
    page, first = open_peer(context, url, THREADS[0], log)
    page.close()
    figures = {"first_load_s": round(first["load_ms"] / 1000, 2), "first_load_from": first["load_from"]}
    for threads in THREADS:
        with MemorySampler(context.browser) as load:
            page, info = open_peer(context, url, threads, log)
        with MemorySampler(context.browser) as run:
            bench = page.evaluate("(args) => window.peer.bench(args)", {**inputs, "warmups": WARMUPS, "repeats": REPEATS})
        page.close()
        figures[f"{threads}t"] = rounded({**bench, "load_s": info.pop("load_ms") / 1000, **info,
                                          "memory": {"load": load.figures, "run": run.figures}})
    figures["outside_requests"] = outside
    return figures


def peer_figures(export_folder: Path, ids: list[int], log=print) -> dict:
    """Both peers' figures, side by side with ours; a peer that fails reports its error instead.

    Each peer runs in a persistent profile of its own (a temporary folder), not an incognito context: there
    the Cache API refuses transformers.js's 632 MB model file in one entry, and a returning reader has a profile.
    """
    stock = stock_int8_folder(export_folder, log)
    gguf = fetch_default_gguf()
    peers = {
        "wllama": ("wllama.html", prompt_texts(Tokenizer.from_file(str(export_folder / "tokenizer.json")), ids), {
            "model": gguf.name,
            "pass": "prompt_ms of a max_tokens=1 completion against the prompt cache (wllama 3 has no decode API); "
                    "wall_ms around createCompletion",
        }),
        "transformers_js": ("transformers.html", {"ids": ids}, {
            "model": f"{stock.relative_to(cache_root())}/{QUANTISED} (quantize_dynamic, QInt8)",
            "pass": "model.forward with past_key_values, returning every new position's logits and the KV cache",
        }),
    }
    figures = {}
    with tempfile.TemporaryDirectory() as scratch:
        server = Server(serve_folder(Path(scratch), gguf, stock))
        try:
            with sync_playwright() as playwright:
                for name, (page, inputs, about) in peers.items():
                    log(f"peer {name}")
                    figures[name] = about
                    with tempfile.TemporaryDirectory() as profile:
                        context = playwright.chromium.launch_persistent_context(
                            profile, executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                        try:
                            figures[name].update(peer_run(context, server.url + page, inputs, log))
                        except Exception as error:  # one peer's failure must not hide the other's figures
                            figures[name]["error"] = str(error).splitlines()[0][:500]
                        finally:
                            context.close()
        finally:
            server.stop()
    return figures


def held_ids(folder: Path) -> list[int]:
    """The benchmarks' token ids: the held-out text, tokenised by the export's own tokenizer."""
    return Tokenizer.from_file(str(folder / "tokenizer.json")).encode((ROOT / "tests" / "data" / "held_text.txt").read_text()).ids


def main() -> None:
    from model_export.build import build

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default="default")
    args = parser.parse_args()
    folder = build(args.source, log=lambda message: print(message, file=sys.stderr))
    held = held_ids(folder)
    print(json.dumps(peer_figures(folder, held[:64], log=lambda message: print(message, file=sys.stderr)), indent=2))


if __name__ == "__main__":
    main()
