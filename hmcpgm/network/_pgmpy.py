"""pgmpy, imported quietly (its logger and import-time notices silenced), and its CPD objects."""

import contextlib
import logging
import warnings

__all__ = ["quiet_pgmpy", "tabular_cpd"]


@contextlib.contextmanager
def quiet_pgmpy():
    """Import and use pgmpy with its logger at ERROR and its import notices silenced.

    The logger's level and the warning filters are restored on exit.

    Yields
    ------
    None
        The body of the ``with`` block runs with pgmpy imported and quiet.
    """
    logger = logging.getLogger("pgmpy")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():  # pgmpy warns about its own modules while importing them
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            import pgmpy.factors.discrete  # noqa: F401
            import pgmpy.inference  # noqa: F401
            import pgmpy.models  # noqa: F401
        with warnings.catch_warnings():
            for category in (FutureWarning, DeprecationWarning):
                warnings.filterwarnings("ignore", category=category, module=r"pgmpy(\.|$)")
            yield
    finally:
        logger.setLevel(level)


def tabular_cpd(TabularCPD, name, parents, table):
    """A pgmpy ``TabularCPD`` of a binary node with binary parents (none for a root)."""
    return TabularCPD(name, 2, table, evidence=parents or None, evidence_card=[2] * len(parents) or None)
