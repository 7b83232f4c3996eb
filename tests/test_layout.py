"""House rules that guard the architecture: no private names shared, no import back up the pipeline, no circles.

There is no line cap: a module is as long as its one concept needs (STYLE.md), and
no rule here forces a split by length.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "hmcpgm"
MODULES = sorted(PACKAGE.rglob("*.py"))


def _is_module(package_dir, name):
    return (package_dir / f"{name}.py").is_file() or (package_dir / name / "__init__.py").is_file()


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_no_private_name_is_imported_from_another_module(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 0 and not (node.module or "").startswith("hmcpgm"):
            continue  # other libraries
        base = path.parent
        for _ in range(max(node.level - 1, 0)):
            base = base.parent
        target = base.joinpath(*(node.module or "").split(".")) if node.module else base
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            if private and not _is_module(target, alias.name):
                pytest.fail(
                    f"{path.relative_to(PACKAGE)}:{node.lineno} imports the private name {alias.name!r} "
                    f"from {'.' * node.level}{node.module or ''}: "
                    "give the helper a public name in a module both may import"
                )


def test_no_import_runs_back_up_the_pipeline():
    """Earlier stages never import later ones (lazy imports inside functions included)."""
    order = ["hierarchy", "likelihood", "network", "inference", "ranking", "decision", "metrics",
             "second_stage", "estimator", "applications", "cli"]
    rank = {name: i for i, name in enumerate(order)}
    for path in MODULES:
        stage = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        if stage not in rank:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level > 0 and node.module:
                parts = node.module.split(".")
                if node.level == 1 and path.parent != PACKAGE:
                    continue  # inside the stage's own package
                target = parts[0]
                if target in rank:
                    assert rank[target] <= rank[stage], (
                        f"{path.relative_to(PACKAGE)}:{node.lineno} ({stage}) imports {target}, a later stage"
                    )


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_graph():
    """hmcpgm's module import graph from the source: every import, lazy ones inside functions included."""
    import networkx as nx

    modules = {_module_name(p): p for p in MODULES}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - (node.level - 1)]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                # "from package import submodule" imports the submodule; other names come from the module itself
                targets = [f"{module}.{a.name}" if f"{module}.{a.name}" in modules else module for a in node.names]
            for target in targets:
                while target and target not in modules and "." in target:  # "import hmcpgm.x.y" names a module
                    target = target.rpartition(".")[0]
                if target in modules and target != name:
                    graph.add_edge(name, target)
    return graph


def test_no_import_circles():
    """No module imports, directly or through others, a module that imports it (lazy imports included).

    A lazy import inside a function is how a circle is usually hidden; a circle means two modules
    are one concept, or a shared piece belongs in a lower module both import.
    """
    import networkx as nx

    graph = _import_graph()
    cycles = [c for c in nx.simple_cycles(graph) if len(c) > 1]
    assert not cycles, "import circles: " + "; ".join(" -> ".join(c + c[:1]) for c in cycles[:10])


def test_the_import_graph_sees_lazy_and_relative_imports():
    """The graph the circle test reads is not empty: known edges of each kind are found."""
    graph = _import_graph()
    assert graph.has_edge("hmcpgm.inference._plan", "hmcpgm.inference._registry")  # relative, at the top
    assert graph.has_edge("hmcpgm.selection._crossfit", "hmcpgm.inference")  # lazy, inside a function
    assert graph.has_edge("hmcpgm.ranking._hier_rank", "hmcpgm.ranking._kernels")  # "from . import _kernels"
    assert graph.number_of_edges() > 3 * graph.number_of_nodes() // 2
