"""`python -m bytepair ...`: the command line (see `bytepair.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
