"""The codebase's shape, kept true by tests: evaluation/ grouped by job (at most ten modules directly in it), imports
going one way (no cycle anywhere; envs imports no other folder, agents only envs, evaluation those, training also
evaluation, play any; only the command line imports the command modules), and the old module names still import and
run.

The import graph is read from the sources with ``ast`` (nothing is imported): every ``import`` and ``from ... import``
anywhere in a module, inside functions too (a lazy import is still a dependency), relative ones resolved, and
``import_module("...")`` / ``__import__("...")`` with a literal name. :func:`import_graph` and :func:`cycles` are
general, so other guards (folders importing one way, the whole tree without cycles) can use them.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Top-level folder -> its name in the cardzoo namespace (pyproject.toml's package-dir).
FOLDERS = {"envs": "cardzoo.envs", "agents": "cardzoo.agents", "training": "cardzoo.training",
           "evaluation": "cardzoo.evaluation", "play": "cardzoo.play", "seeds": "cardzoo.seeds"}
# Folders a package puts on its own __path__ (evaluation/__init__.py): their modules live under the package's name.
PATH_EXTENSIONS = {"evaluation/moved": "cardzoo.evaluation"}
MAX_FLAT_EVALUATION_MODULES = 10


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the namespace -> its file (a package is its ``__init__.py``)."""
    found = {}
    for folder, package in FOLDERS.items():
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root)
            parent = relative.parent.as_posix()
            if parent in PATH_EXTENSIONS:
                name = f"{PATH_EXTENSIONS[parent]}.{path.stem}"
            else:
                parts = [package, *relative.parts[1:-1]] + ([] if path.stem == "__init__" else [path.stem])
                name = ".".join(parts)
            found[name] = path
    return found


def _resolve(target: str, known: set[str]) -> str | None:
    # The longest known module the name falls in (``cardzoo.envs.rope_team.rules.LEVELS`` -> ``...rules``).
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The cardzoo modules ``name`` (in ``path``) imports, wherever in the file."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            # ``from pkg import sub`` depends on pkg.sub when sub is a module, else on pkg.
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                targets.add(sub if sub in known else base)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Name) and node.func.id in ("import_module", "__import__"))
                   or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"))):
            targets.add(node.args[0].value)
    resolved = {_resolve(t, known) for t in targets if t == "cardzoo" or t.startswith("cardzoo.")}
    return {t for t in resolved if t and t != name}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the cardzoo modules it imports."""
    files = module_files(root)
    known = set(files)
    return {name: imports_of(name, path, known) for name, path in files.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(graph: dict[str, set[str]], component: list[str]) -> str:
    edges = [f"{a} -> {b}" for a in component for b in sorted(graph[a]) if b in component]
    return "cycle of " + ", ".join(component) + ":\n    " + "\n    ".join(edges)


def subgraph(graph: dict[str, set[str]], prefix: str) -> dict[str, set[str]]:
    inside = {m for m in graph if m == prefix or m.startswith(prefix + ".")}
    return {m: graph[m] & inside for m in inside}


def test_evaluation_has_at_most_ten_modules_directly_in_it():
    flat = sorted(p.name for p in (ROOT / "evaluation").glob("*.py"))
    assert len(flat) <= MAX_FLAT_EVALUATION_MODULES, (
        f"evaluation/ holds {len(flat)} modules directly ({', '.join(flat)}); at most "
        f"{MAX_FLAT_EVALUATION_MODULES}: put a new one in the subpackage of its job (matches, report, studies, "
        "benchmarks)")


def test_no_import_cycle_among_the_evaluation_modules():
    graph = subgraph(import_graph(), "cardzoo.evaluation")
    found = cycles(graph)
    assert found == [], "\n".join(describe(graph, c) for c in found)


def test_the_import_graph_sees_relative_lazy_and_named_imports(tmp_path):
    """The helper itself, on a made-up tree: a cycle hidden in a function, through ``from . import``, is found."""
    (tmp_path / "evaluation" / "report").mkdir(parents=True)
    (tmp_path / "evaluation" / "__init__.py").write_text("")
    (tmp_path / "evaluation" / "report" / "__init__.py").write_text("from .build import main\n")
    (tmp_path / "evaluation" / "report" / "build.py").write_text("from .model import Row\n")
    (tmp_path / "evaluation" / "report" / "model.py").write_text(
        "import json\n\ndef f():\n    from . import build\n    from ..stats import wilson\n")
    (tmp_path / "evaluation" / "stats.py").write_text(
        "from importlib import import_module\nimport_module('cardzoo.evaluation.report.model')\n")
    graph = import_graph(tmp_path)
    assert graph["cardzoo.evaluation.report"] == {"cardzoo.evaluation.report.build"}
    assert graph["cardzoo.evaluation.report.model"] == {"cardzoo.evaluation.report.build", "cardzoo.evaluation.stats"}
    assert cycles(graph) == [["cardzoo.evaluation.report.build", "cardzoo.evaluation.report.model",
                              "cardzoo.evaluation.stats"]]


# Every ``python -m cardzoo.evaluation.<name>`` the README, docs, changelog or committed results named before the
# modules were grouped by job (0.2.0): each keeps running from evaluation/moved/.
OLD_COMMANDS = ("batched_bench", "ceilings_rope_team", "ceilings_summit_rush", "distil_study", "rook_search_study",
                "rope_team_search_study", "speed", "summit_rush_search_study", "summit_rush_talk", "training_speed")


def test_the_old_module_names_are_the_commands_people_wrote():
    """Every ``python -m cardzoo.evaluation.<name>`` the README, the docs, the changelog or a committed result quotes
    names a module that exists: a subpackage's module, or an old name kept in evaluation/moved/."""
    import re

    quoted = set()
    texts = [ROOT / "README.md", ROOT / "CHANGELOG.md", *(ROOT / "docs").rglob("*.md"),
             *(ROOT / "evaluation" / "results").rglob("*.json"), *(ROOT / "evaluation" / "results").rglob("*.md")]
    for path in texts:
        quoted |= set(re.findall(r"-m cardzoo\.evaluation\.([a-z0-9_.]*[a-z0-9_])", path.read_text()))
    modules = set(module_files())
    missing = sorted(q for q in quoted if f"cardzoo.evaluation.{q}" not in modules)
    assert len(quoted) > 10 and missing == [], f"commands quoted but no module: {missing}"


@pytest.mark.parametrize("old", OLD_COMMANDS)
def test_an_old_module_name_still_runs_its_command(old):
    shown = subprocess.run([sys.executable, "-m", f"cardzoo.evaluation.{old}", "--help"], capture_output=True,
                           text=True, timeout=120)
    assert shown.returncode == 0 and "usage:" in shown.stdout, shown.stderr


def test_the_runner_imports_under_its_old_name():
    from cardzoo.evaluation import runner
    from cardzoo.evaluation.matches import runner as moved

    assert runner.play_env_game is moved.play_env_game and runner.Matchup is moved.Matchup


# ----------------------------------------------------------------------------- each game's facts in one place
MAX_LEVEL_LISTS = 2  # the rules module's LEVELS, and room for one more


def level_lists(games: dict[str, tuple[str, ...]], root: Path = ROOT) -> dict[str, list[str]]:
    """Per game, where outside tests/ a tuple, list or set literal, or a dict's keys, name at least three of its
    levels (as ``file:line``): a level list typed out again instead of read from the game's rules module. Games
    share level names (Normal, Hard, Expert), so a literal counts for the game it covers best: the most of its
    levels named, then the fewest left out."""
    found: dict[str, list[str]] = {game: [] for game in games}
    files = [p for folder in FOLDERS for p in sorted((root / folder).rglob("*.py"))]
    files += sorted((root / "docs").glob("*.py"))
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
                items = node.elts
            elif isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None]
            else:
                continue
            named = {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}
            score = {g: (len(named & set(lv)), -len(set(lv) - named)) for g, lv in games.items()}
            best = max(score, key=score.get)
            if score[best][0] >= 3:
                found[best].append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_each_games_level_list_is_typed_at_most_twice():
    from cardzoo.envs.registry import GAMES

    games = {game.name: game.levels for game in GAMES.values() if len(game.levels) >= 3}
    found = level_lists(games)
    for game in (GAMES[name] for name in games):
        places = found[game.name]
        assert f"envs/{game.name}/rules.py" in {p.split(":")[0] for p in places}  # the one that must be there
        assert len(places) <= MAX_LEVEL_LISTS, (
            f"{game.name}'s levels are typed out in {len(places)} places ({', '.join(places)}); at most "
            f"{MAX_LEVEL_LISTS}: read them from the registry (cardzoo.envs.registry.GAMES[{game.name!r}].levels)")
    assert len(games) >= 2


# ----------------------------------------------------------------------------- a short README
MAX_README_LINES = 200


def readme_problems(readme: str, version: str) -> list[str]:
    """What keeps a README from being short and version-free: more than MAX_README_LINES lines, or the package's
    own version string (a library pin such as ``torch==2.13.0`` may stay; ``version`` is pyproject's)."""
    problems = []
    if len(readme.splitlines()) > MAX_README_LINES:
        problems.append(f"README.md has {len(readme.splitlines())} lines, at most {MAX_README_LINES}: move a "
                        "section to a page in docs/ and link it")
    if version in readme:
        problems.append(f"README.md states the version {version}; pyproject.toml holds it (cite 'the version used')")
    return problems


def test_the_readme_is_short_and_names_no_version():
    import re

    version = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert readme_problems((ROOT / "README.md").read_text(), version) == []


def test_the_readme_guard_sees_a_long_readme_and_a_version():
    assert readme_problems("# x\n" * 199 + "torch==2.13.0\n", "0.2.0") == []
    assert len(readme_problems("# x\n" * 201, "0.2.0")) == 1
    assert "0.2.0" in readme_problems("note = {Version 0.2.0}\n", "0.2.0")[0]


# ----------------------------------------------------------------------------- imports go one way
CLI = "cardzoo.evaluation.cli"
# The command layer: each folder's commands, assembled by the command line module; they may import any folder.
COMMANDS = {CLI, "cardzoo.evaluation.commands", "cardzoo.play.commands", "cardzoo.training.commands"}
# What each folder may import besides itself: the folders below it (the command layer may import any).
# Training sits below evaluation: evaluation measures the trainers (its benchmarks) and plays what they make, and
# never the other way round; what both need (the reserved deals, the game loops, progress bars, charts) lives below.
MAY_IMPORT = {"envs": set(), "seeds": set(), "agents": {"envs"}, "training": {"envs", "seeds", "agents"},
              "evaluation": {"envs", "seeds", "agents", "training"},
              "play": {"envs", "seeds", "agents", "evaluation", "training"}}


def command_layer(module: str) -> bool:
    return module in COMMANDS


def folder(module: str) -> str:
    return module.split(".")[1]


def no_cycles(graph: dict[str, set[str]]) -> str:
    """Empty, or each cycle of the graph with its edges."""
    return "\n".join(describe(graph, c) for c in cycles(graph))


def wrong_way(graph: dict[str, set[str]]) -> list[str]:
    """The imports of a folder into one it may not import (``MAY_IMPORT``), the command layer's aside."""
    return [f"{a} -> {b}" for a in sorted(graph) if not command_layer(a) for b in sorted(graph[a])
            if folder(b) not in MAY_IMPORT[folder(a)] | {folder(a)}]


def command_importers(graph: dict[str, set[str]]) -> list[str]:
    """Imports of a command module (``COMMANDS``, the command line module among them) by anything but the command
    line module."""
    return [f"{a} -> {b}" for a in sorted(graph) if a != CLI for b in sorted(graph[a] & COMMANDS)]


def test_no_import_cycle_anywhere():
    """The whole tree, lazy imports included: a cycle hidden in a function still ties the modules together."""
    graph = import_graph()
    assert len(graph) > 100 and no_cycles(graph) == ""


def test_folders_import_one_way():
    """envs imports no other folder, agents only envs, training only those (and seeds), evaluation also training,
    play any of them; only the command layer (each folder's commands) imports upwards."""
    graph = import_graph()
    assert any(folder(b) == "envs" for a in graph if folder(a) == "agents" for b in graph[a])  # the graph sees them
    assert wrong_way(graph) == []


def test_only_the_command_line_assembles_the_commands():
    """Each folder's command module is imported by the command line module only, and that module by nothing (a
    trainer or a study importing it back made an import cycle of six modules)."""
    graph = import_graph()
    assert COMMANDS <= set(graph) and graph[CLI] >= COMMANDS - {CLI}
    assert command_importers(graph) == []


PLANTS = [  # a made-up violation of each rule, added to one module of a copy of the tree: each guard must see it
    ("training/train.py", "from cardzoo.evaluation.cli import main", command_importers),
    ("play/table.py", "from cardzoo.play.commands import play", command_importers),
    ("evaluation/commands.py", "from cardzoo.evaluation.cli import plain", command_importers),
    ("envs/batched.py", "from cardzoo.agents.seeding import agent_seed", wrong_way),
    ("agents/base.py", "from cardzoo.evaluation.stats import wilson", wrong_way),
    ("evaluation/report/model.py", "def f():\n    from cardzoo.play import records", wrong_way),
    ("training/common.py", "from cardzoo.play.views import outcome_text", wrong_way),
    ("training/train.py", "def f():\n    from cardzoo.evaluation.stats import wilson", wrong_way),
    ("envs/common/progress.py", "def f():\n    from cardzoo.training import train", no_cycles),
]


@pytest.mark.parametrize(("path", "line", "guard"), PLANTS, ids=[p for p, _, _ in PLANTS])
def test_each_import_guard_sees_a_planted_violation(tmp_path, path, line, guard):
    planted = path.split("/")[0]
    for name in FOLDERS:  # the tree's sources, the planted module's folder copied, the others linked
        if name == planted:
            shutil.copytree(ROOT / name, tmp_path / name, ignore=lambda _, names: [n for n in names if "." in n
                                                                                    and not n.endswith(".py")])
        else:
            (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / path).write_text((ROOT / path).read_text() + "\n" + line + "\n")
    assert not guard(import_graph(ROOT)), "the tree itself must be clean"
    assert guard(import_graph(tmp_path)), f"{line!r} in {path} was not seen"


# ----------------------------------------------------------------------------- one place draws fresh seeds
FRESH_SEED_CALLS = {("secrets", "randbelow"), ("secrets", "randbits"), ("secrets", "token_bytes"),
                    ("random", "SystemRandom"), ("os", "urandom")}


def fresh_seed_draws(root: Path = ROOT) -> list[str]:
    """Where outside ``envs/common/seeding.py`` code draws OS randomness (``secrets.randbelow``, ``os.urandom``,
    ...), as ``file:line``: a seed drawn somewhere else than ``fresh_seed`` (the play server's tokens are not
    seeds: ``secrets.token_urlsafe`` and ``compare_digest`` are not counted)."""
    found = []
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*.py")):
            if path.relative_to(root).as_posix() == "envs/common/seeding.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                        and (node.value.id, node.attr) in FRESH_SEED_CALLS):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_fresh_seeds_are_drawn_in_one_place():
    found = fresh_seed_draws()
    assert not found, (f"OS randomness drawn in {', '.join(found)}: draw a game seed with "
                       "cardzoo.envs.common.seeding.fresh_seed (64 bits, for every command)")


def test_the_seed_guard_sees_a_planted_draw(tmp_path):
    (tmp_path / "play").mkdir()
    (tmp_path / "play" / "commands.py").write_text("import secrets\nseed = secrets.randbelow(2**31)\n")
    (tmp_path / "envs" / "common").mkdir(parents=True)
    (tmp_path / "envs" / "common" / "seeding.py").write_text("import secrets\nx = secrets.randbits(64)\n")
    assert fresh_seed_draws(tmp_path) == ["play/commands.py:2"]
