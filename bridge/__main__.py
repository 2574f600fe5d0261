"""``python -m bridge``: the terminal commands (``bridge.cli.commands``)."""

import sys

from bridge.cli.commands import main

sys.exit(main())
