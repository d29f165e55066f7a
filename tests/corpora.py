"""Where the shared, human-labelled corpora are (MRPC, STS-B, PIT-2015, PARAPHRASUS).

They are public data sets kept outside the repository (licences: see their README). Looked up
in ``PARAEVAL_SHARED_DATA``, then in ``shared/data`` beside the checkout, then at this
workplace's fixed location; tests that need them skip with the reason when none exists.
"""

from __future__ import annotations

import os
from pathlib import Path

_CANDIDATES = [
    os.environ.get("PARAEVAL_SHARED_DATA", ""),
    str(Path(__file__).resolve().parent.parent.parent / "shared" / "data"),
    "/work/shared/data",
]

SHARED_DATA = next((Path(path) for path in _CANDIDATES if path and Path(path, "mrpc").is_dir()), Path(_CANDIDATES[1]))
MRPC = SHARED_DATA / "mrpc"
MISSING_REASON = f"the shared corpora are not at {SHARED_DATA} (set PARAEVAL_SHARED_DATA)"
