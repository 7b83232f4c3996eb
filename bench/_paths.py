"""Where the bench scripts find the benchmark data (the Clus-HMC ARFF files of ``shared/data/hmc``).

``HMCPGM_HMC_DATA`` names the folder; without it, ``shared/data/hmc`` beside the
repository. The tests and the notebooks read the same variable.
"""

import os
from pathlib import Path

HMC_DATA = Path(os.environ.get("HMCPGM_HMC_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data" / "hmc")


def require_data(folder, *names):
    """Exit with one line (status 1) when the benchmark data is missing: ``folder``, or one of its files ``names``.

    A script that needs the data calls it before reading, so that a user without the data
    reads where it was looked for and how to point to it, not a traceback.
    """
    import sys

    folder = Path(folder)
    missing = folder if not folder.is_dir() else next((folder / n for n in names if not (folder / n).is_file()), None)
    if missing is not None:
        sys.exit(f"{Path(sys.argv[0]).name}: benchmark data not found: {missing} does not exist (the Clus-HMC ARFF "
                 "files of C-HMCNN's HMC_data: put them in shared/data/hmc beside the repository, or name their "
                 "folder with HMCPGM_HMC_DATA or --data-dir where the script has it)")
