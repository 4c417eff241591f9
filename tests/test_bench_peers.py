"""benchmarks/peers.py, the parts that run in seconds: the HF-style config, the prompts as text, the served folder.

The peers themselves run in ``make bench-browser`` (minutes, the real model), not here.
"""

from urllib.request import urlopen

from tokenizers import Tokenizer

from benchmarks.peers import LIBRARIES, PAGES, hf_config, prompt_texts, serve_folder
from tests.browser import Server
from tests.conftest import manifest_of

GGUF_METADATA = {"qwen2.feed_forward_length": 4864, "qwen2.context_length": 32768,
                 "qwen2.attention.layer_norm_rms_epsilon": 9.999999974752427e-07, "qwen2.rope.freq_base": 1e6,
                 "tokenizer.ggml.bos_token_id": 151643}


def test_config_comes_from_the_manifest(tiny_export):
    manifest = manifest_of(tiny_export)
    files = hf_config(manifest, GGUF_METADATA)
    config = files["config.json"]
    assert config["model_type"] == "qwen2"
    assert config["num_hidden_layers"] == manifest["kv"]["num_layers"]
    assert config["num_key_value_heads"] == manifest["kv"]["num_kv_heads"]
    assert config["head_dim"] == manifest["kv"]["head_dim"]
    assert config["vocab_size"] == manifest["vocab_size"]
    assert config["rms_norm_eps"] == 1e-6
    assert files["generation_config.json"]["eos_token_id"] == manifest["eos_ids"]


def test_prompt_texts_retokenise_to_the_ids(tiny_export, held_text):
    tokenizer = Tokenizer.from_file(str(tiny_export / "tokenizer.json"))
    ids = tokenizer.encode(held_text).ids[:64]
    prompts = prompt_texts(tokenizer, ids)
    for name, count in prompts["counts"].items():
        assert tokenizer.encode(prompts["texts"][name]).ids == ids[:count]


def test_served_folder_is_isolated_and_local(tmp_path):
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    stock = tmp_path / "stock"
    stock.mkdir()
    (stock / "config.json").write_text("{}")
    (tmp_path / "serve").mkdir()
    server = Server(serve_folder(tmp_path / "serve", model, stock))
    try:
        for path in [page.name for page in PAGES.iterdir()] + ["models/model.gguf", "models/stock-int8/config.json"]:
            with urlopen(server.url + path) as response:
                assert response.headers["Cross-Origin-Embedder-Policy"] == "require-corp", path
                assert response.headers["Cross-Origin-Opener-Policy"] == "same-origin", path
        for name, folder in LIBRARIES.items():
            assert folder.is_dir(), f"{folder} is missing: the {name} peer imports from it"
    finally:
        server.stop()
