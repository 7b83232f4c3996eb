"""House rules that guard the architecture: no private names shared, no import back up the pipeline.

There is no line cap: a module is as long as its one concept needs (STYLE.md).
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
