"""Where the tests find the benchmark data (the Clus-HMC ARFF files of ``shared/data/hmc``).

``HMCPGM_HMC_DATA`` names the folder; without it, ``shared/data/hmc`` beside the
repository (where CI has it). The bench scripts and the notebooks read the same variable.
"""

import os
from pathlib import Path

HMC_DATA = Path(os.environ.get("HMCPGM_HMC_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data" / "hmc")
