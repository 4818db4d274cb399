"""``python -m twistarena.clients.cli``: the ``twistarena`` command without its script."""

import sys

from . import main

sys.exit(main())
