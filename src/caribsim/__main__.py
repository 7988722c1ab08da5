"""``python -m caribsim``: the command line of ``caribsim.cli``."""

import sys

from caribsim.cli import build_parser, main  # noqa: F401  (build_parser: the CLI's parser, for tests and docs)

if __name__ == "__main__":
    sys.exit(main())
