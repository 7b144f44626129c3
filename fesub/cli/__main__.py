"""``python -m fesub.cli``: the ``fesub`` command."""

import sys

from . import main

sys.exit(main())
