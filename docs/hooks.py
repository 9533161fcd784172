"""MkDocs hook: give mkdocstrings a ``cardzoo`` folder to read.

The project has no ``cardzoo/`` folder (pyproject.toml maps the top-level folders into the namespace), so the API
reference reads the sources through a tree of links, ``build/docs_namespace/cardzoo/<package> -> <package>``, made
before any page is rendered.
"""

from __future__ import annotations

from pathlib import Path

from mkdocs.plugins import event_priority

PACKAGES = ("envs", "agents", "training", "evaluation", "play", "seeds")


@event_priority(100)  # before mkdocstrings reads its paths
def on_config(config):
    root = Path(config.config_file_path).parent
    namespace = root / "build" / "docs_namespace" / "cardzoo"
    namespace.mkdir(parents=True, exist_ok=True)
    for package in PACKAGES:
        link = namespace / package
        if not link.is_symlink():
            link.symlink_to(root / package, target_is_directory=True)
    return config
