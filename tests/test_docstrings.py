"""The public API's docstrings follow the numpydoc rules below (numpydoc.validate).

Checked: every callable in ``hmcpgm.__all__`` and in the ``__all__`` of the public
modules, and the public methods and properties of each class that hmcpgm itself
defines (methods inherited from scikit-learn or from ``Exception`` are documented
there). Constants are not checked.
"""

import dataclasses
import functools
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

numpydoc_validate = pytest.importorskip("numpydoc.validate")
from numpydoc.docscrape import get_doc_object  # noqa: E402  (numpydoc is optional: imported after the skip)

ROOT = Path(__file__).resolve().parents[1]

PUBLIC_MODULES = [
    "hmcpgm",
    "hmcpgm.inference",
    "hmcpgm.ranking",
    "hmcpgm.likelihood",
    "hmcpgm.selection",
    "hmcpgm.second_stage",
    "hmcpgm.tempering",
    "hmcpgm.calibration",
    "hmcpgm.network",
    "hmcpgm.decision",
    "hmcpgm.metrics",
    "hmcpgm.first_stage",
    "hmcpgm.applications",
    "hmcpgm.persist",
    "hmcpgm.io",
    "hmcpgm.plot",
    "hmcpgm.scale",
    "hmcpgm.datasets",
    "hmcpgm.estimator",
    "hmcpgm.hierarchy",
    "hmcpgm.corrections",
]

# The enforced numpydoc error codes, each with why it matters.
ENFORCED = {
    "GL01": "the summary starts on the line of the opening quotes or the next one",
    "GL02": "multi-line docstrings close their quotes on a line of their own",
    "GL03": "no double blank lines, no blank line before the closing quotes",
    "GL05": "no tabs: the docstrings render the same everywhere",
    "GL06": "only numpydoc section names, so mkdocstrings renders every section",
    "GL07": "sections in numpydoc's order",
    "GL08": "every public object has a docstring",
    "GL09": "a deprecation note comes before the extended summary",
    "GL10": "reST directives are well formed (two colons)",
    "SS01": "every docstring opens with a summary",
    "SS04": "the summary has no leading whitespace",
    "PR01": "every parameter is documented",
    "PR02": "no documented parameter that the signature does not have (stale docs)",
    "PR03": "parameters documented in signature order",
    "PR04": "every documented parameter has a type",
    "PR05": "parameter types do not end with a period",
    "PR06": "standard type names (int, bool, str, not integer, boolean, string)",
    "PR07": "every documented parameter says what it means",
    "PR08": "parameter descriptions start with a capital letter",
    "PR10": "'name : type' with a space before the colon, or the type is read as part of the name",
    "RT01": "a function that returns a value documents it in a Returns section",
    "RT03": "a documented return value says what it is",
    "RT04": "return descriptions start with a capital letter",
    "YD01": "a generator documents what it yields",
    "SA02": "See Also descriptions end with a period",
    "SA03": "See Also descriptions start with a capital letter",
    "SA04": "See Also references have a description",
}
# Not enforced (pyproject's [tool.numpydoc_validation] leaves them out too):
# ES01, SA01, EX01: an extended summary, See Also and Examples are welcome, not required;
# SS02, SS03, SS05, SS06: summary prose style (properties read "int: the number of ...",
#   summaries may start with a symbol such as ``theta`` or mLPR, or describe rather than command);
# RT02: "name : type" return lines name the value; PR09, RT05: descriptions may end without a period.
# RT01 only applies to functions and methods: a property's summary names its type.

# Objects exempt from the rules, with the reason.
EXCLUDED = {}


def _defined_here(obj):
    """True for functions, properties and classes defined in hmcpgm (not inherited from elsewhere)."""
    if isinstance(obj, property):
        obj = obj.fget
    elif isinstance(obj, functools.cached_property):
        obj = obj.func
    elif isinstance(obj, (classmethod, staticmethod)):
        obj = obj.__func__
    return (getattr(obj, "__module__", None) or "").split(".")[0] == "hmcpgm"


def _members(cls, path):
    """(dotted name, object to validate, class attribute) of the public methods and properties of ``cls``."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (classmethod, staticmethod)):
            yield f"{path}.{name}", raw.__func__, raw
        elif isinstance(raw, (property, functools.cached_property)) or inspect.isfunction(raw):
            yield f"{path}.{name}", raw, raw


def public_objects(module_name):
    """(dotted name, object) of every callable the module exports and the methods of its classes."""
    module = importlib.import_module(module_name)
    found = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not callable(obj) or inspect.ismodule(obj):
            continue  # constants
        path = f"{module_name}.{name}"
        found.append((path, obj))
        if inspect.isclass(obj):
            found += [(p, member) for p, member, raw in _members(obj, path) if _defined_here(raw)]
    return found


class _Validator(numpydoc_validate.Validator):
    """numpydoc's validator, built from an object, that reads a class's fields from its Attributes section.

    Record classes (dataclasses, NamedTuples, ScoreModel) keep each constructor argument
    as an attribute of the same name, and numpy style documents them once, under
    Attributes; a constructor argument documented there counts as documented.
    """

    def __init__(self, obj_name):
        super().__init__(get_doc_object(obj_name))

    @property
    def signature_parameters(self):
        params = super().signature_parameters
        if inspect.isclass(self.obj):
            attributes = {n for names, _, _ in self.doc["Attributes"] for n in names.split(", ")}
            as_attribute = attributes - set(self.doc_all_parameters)
            params = tuple(p for p in params if p not in as_attribute)
        return params


def docstring_errors(obj):
    """The enforced numpydoc errors of ``obj``'s docstring, as (code, message) pairs."""
    result = numpydoc_validate.validate(obj, validator_cls=_Validator)
    return [(code, message) for code, message in result["errors"] if code in ENFORCED]


def _module_available(module_name):
    if module_name == "hmcpgm.plot":
        return importlib.util.find_spec("matplotlib") is not None
    return True


@pytest.mark.parametrize("module_name", PUBLIC_MODULES)
def test_public_docstrings_follow_numpydoc(module_name):
    if not _module_available(module_name):
        pytest.skip(f"{module_name} needs an optional extra")
    objects = public_objects(module_name)
    assert objects, f"{module_name} exports no callables: is __all__ missing?"
    seen, problems = set(), []
    for path, obj in objects:
        if path in EXCLUDED or id(obj) in seen:
            continue
        seen.add(id(obj))
        for code, message in docstring_errors(obj):
            problems.append(f"{path}: {code} {message}")
    assert not problems, f"{len(problems)} docstring problems:\n" + "\n".join(problems)


def test_validator_catches_an_undocumented_parameter():
    """The check is live: a function with an undocumented parameter and no Returns fails."""

    def bad(x, y):
        """Add two numbers.

        Parameters
        ----------
        x : float
            The first number.
        """
        return x + y

    codes = {code for code, _ in docstring_errors(bad)}
    assert {"PR01", "RT01"} <= codes


def test_record_classes_may_document_fields_as_attributes():
    @dataclasses.dataclass
    class Record:
        """A record.

        Attributes
        ----------
        a : int
            The first field.
        """

        a: int
        b: int

    assert [code for code, _ in docstring_errors(Record)] == ["PR01"]


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is new in Python 3.11")
def test_pyproject_numpydoc_settings_match():
    """pyproject's [tool.numpydoc_validation] (numpydoc's own hook) enforces the same codes."""
    import tomllib
    from numpydoc.validate import ERROR_MSGS

    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["numpydoc_validation"]
    checks = settings["checks"]
    assert checks[0] == "all", "checks lists 'all' and then the codes left out"
    assert set(checks[1:]) == set(ERROR_MSGS) - set(ENFORCED), "update ENFORCED or pyproject.toml"
