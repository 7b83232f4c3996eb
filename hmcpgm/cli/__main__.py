"""``python -m hmcpgm.cli``: the ``hmcpgm`` command."""

from . import run

run()
