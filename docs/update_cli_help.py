"""Regenerate the ``--help`` blocks and the example session of docs/cli.md.

Usage (from the repository root)::

    python docs/update_cli_help.py

Every fenced ``text`` block that starts with ``$ hmcpgm [COMMAND] --help`` is replaced
by the current help text at 80 columns, and the block that starts with
``$ hmcpgm example data`` is re-run command by command (bash, in an empty temporary
folder) with its outputs pasted under each command. tests/test_docs.py checks both.
"""

import contextlib
import io
import os
import re
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent / "cli.md"


def help_text(command):
    from hmcpgm.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([command, "--help"] if command else ["--help"])
    return out.getvalue().rstrip("\n")


def run_session(block):
    """The session ``block`` (lines ``$ command`` and their outputs) re-run: its new text."""
    import subprocess
    import tempfile

    commands = [line[2:] for line in block.splitlines() if line.startswith("$ ")]
    lines = []
    # this Python's scripts first: 'hmcpgm' is the one installed beside it, activated or not
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
    with tempfile.TemporaryDirectory() as folder:
        for command in commands:
            run = subprocess.run(["bash", "-c", command], cwd=folder, capture_output=True, text=True, check=True,
                                 env=env)
            lines.append(f"$ {command}")
            lines.extend(run.stdout.rstrip("\n").splitlines())
    return "\n".join(lines)


SESSION = r"```text\n(\$ hmcpgm example data\n.*?)\n```"


def main():
    os.environ["COLUMNS"] = "80"
    text = PAGE.read_text()

    def replace(match):
        command = match.group(1) or ""
        prompt = f"$ hmcpgm {command} --help" if command else "$ hmcpgm --help"
        return f"```text\n{prompt}\n{help_text(command)}\n```"

    text = re.sub(r"```text\n\$ hmcpgm (?:([\w-]+) )?--help\n.*?\n```", replace, text, flags=re.S)
    text = re.sub(SESSION, lambda m: f"```text\n{run_session(m.group(1))}\n```", text, flags=re.S)
    PAGE.write_text(text)
    print(f"updated {PAGE}")


if __name__ == "__main__":
    main()
