"""Where the shared, human-labelled corpora are (MRPC, STS-B, PIT-2015, PARAPHRASUS).

They are public data sets kept outside the repository (licences: see their README). Looked up
in ``PARAEVAL_SHARED_DATA``, else in ``shared/data`` beside the checkout (``../shared/data``
from the repository root); tests that need them skip with the reason when neither holds them.
No path of a particular machine: a clone anywhere finds them the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BESIDE_CHECKOUT = ROOT.parent / "shared" / "data"


def shared_data_dir(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """The folder of the shared corpora: ``PARAEVAL_SHARED_DATA`` when set, else beside the checkout."""
    configured = environ.get("PARAEVAL_SHARED_DATA", "").strip()
    return Path(configured) if configured else BESIDE_CHECKOUT


SHARED_DATA = shared_data_dir()
MRPC = SHARED_DATA / "mrpc"
MISSING_REASON = f"the shared corpora are not at {SHARED_DATA} (set PARAEVAL_SHARED_DATA)"
