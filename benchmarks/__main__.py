"""``python -m benchmarks``: every benchmark in one table (see ``run_all.py``)."""

import sys

from benchmarks.run_all import main

sys.exit(main())
