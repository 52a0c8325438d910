"""`python -m codefu_trainer.training.report`: see `cli`."""

import sys

from codefu_trainer.training.report.cli import main

sys.exit(main())
