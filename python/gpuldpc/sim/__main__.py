"""``python -m gpuldpc.sim``: the ``gpuldpc-sim`` command line (:mod:`gpuldpc.sim.cli`)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
