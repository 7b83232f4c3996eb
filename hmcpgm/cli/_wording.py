"""Library messages said the command-line way: its options where the library names Python's parameters."""

import re

__all__ = ["command_line_wording"]


# the engine options that have a command-line flag (the others are Python's only)
_OPTION_FLAGS = {"budget_bytes": "--budget-gb", "max_clique": "--max-clique", "damping": "--damping",
                 "max_iter": "--max-iter"}


def _options_as_flags(match):
    """An engine's refusal of an option (:func:`hmcpgm.inference.check_engine_options`) in flags."""
    takes = [_OPTION_FLAGS[n] for n in re.findall(r"'(\w+)'", match[1]) if n in _OPTION_FLAGS]
    got = [_OPTION_FLAGS.get(n, n) for n in re.findall(r"'(\w+)'", match[2])]
    return f"takes {' and '.join(takes) or 'none of the inference options'}, not {' or '.join(got)}"


# Python-side advice in library messages, said the command-line way.
_CLI_ADVICE = [
    (r"takes the options (\[[^]]*\]|none); got unknown option\(s\) (\[[^]]*\])", _options_as_flags),
    (r"\(the limit is max_classes=(\d+)\)", r"(the limit is \1 classes)"),
    (
        r"drop those classes \(Hierarchy\.subgraph\) or pass allow_empty=True",
        "drop those classes or pass --allow-empty",
    ),
    (r"pass allow_empty=True", "pass --allow-empty"),
    (r"Close the labels upward with Hierarchy\.close_labels", "Close the labels upward with --close-labels"),
    (r"Hierarchy\.close_labels", "--close-labels"),
    (r"max_clique=(\d+)", r"--max-clique \1"),
    (r"\bmax_clique\b", "--max-clique"),
    (r"max_iter=(\d+)", r"--max-iter \1"),
    (r"raise max_iter or damping", "raise --max-iter or --damping"),
    (r"engine='(\w+)'", r"--engine \1"),
    (r"pseudo_count=(\d+)", r"--pseudo-count \1"),
    (r"pass pseudo_count > 0", "pass --pseudo-count > 0"),
    (r"^fdr needs", "--fdr needs"),
    (r"^relations names no relation", "--relations names no relation"),
    (r"pass evidence=None", "leave out --evidence"),
    (r"\bvalid_fraction=", "--valid-fraction "),
    (r"\bbudget_bytes=([\d,]+)", r"the --budget-gb budget (\1 bytes)"),
    (r"^cv must be an int between 2 and the (\d+) rows, got (\d+)",
     r"the default fit chooses its model by \2-fold cross-fitting and needs at least \2 training rows, got \1; "
     r"on fewer, fix each choice: --mlpr-version, --score-model, --tempering none, --pool none, --consistency "
     r"and --no-recalibrate"),
    (r"evidence code of evidence \(", "evidence code of --evidence ("),
]


# check-inference compares engines: its options are --engines and --reference
_COMMAND_ADVICE = {"check-inference": [(r"engine='(\w+)'", r"--engines \1"),
                                       (r"\breference='(\w+)'", r"--reference \1")]}


def command_line_wording(message, command=None):
    """A library message said the command-line way (its options for Python's parameters), on one line."""
    for pattern, replacement in _COMMAND_ADVICE.get(command, []) + _CLI_ADVICE:
        message = re.sub(pattern, replacement, message)
    return " ".join(str(message).split())  # one line
