#!/usr/bin/env python
"""Write the documentation's generated reference pages (management commands, REST API endpoints).

.venv/bin/python scripts/docs_reference.py          # rewrite the pages
.venv/bin/python scripts/docs_reference.py --check  # exit 1 if a committed page is stale
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The pages describe the code, not an installation: no key or data folder of a real one is needed.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import django  # noqa: E402

django.setup()

from paraeval.docs_reference import generated_pages  # noqa: E402


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in generated_pages().items():
        if path.exists() and path.read_text() == text:
            continue
        if check:
            stale.append(path.relative_to(ROOT))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale generated pages (run scripts/docs_reference.py): " + ", ".join(map(str, stale)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
