"""`python -m bytepair ...` is the `bytepair` command (see bytepair/cli.py)."""

import sys

from .cli import main

sys.exit(main())
