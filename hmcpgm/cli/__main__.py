"""``python -m hmcpgm.cli``: the ``hmcpgm`` command."""

import sys

from . import main

sys.exit(main())
