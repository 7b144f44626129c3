"""``python -m fesub ...`` is the ``fesub`` command."""

import sys

from .cli import main

sys.exit(main())
