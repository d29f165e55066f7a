"""Install WordNet 3.0 for NLTK from Debian's wordnet-base package (no network).

nltk.download() cannot reach its server here, so METEOR's synonym matching uses the
Debian copy: the database files are copied (NLTK refuses symlinks that leave its root) and
the `lexnames` file Debian does not ship is written from the lexnames(5WN) list.

Usage: python scripts/install_wordnet.py NLTK_DATA_DIR
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

DEBIAN_WORDNET = Path("/usr/share/wordnet")

# WordNet 3.0 lexicographer files in their standard order (lexnames(5WN)): name, category.
LEXNAMES = [
    ("adj.all", 3),
    ("adj.pert", 3),
    ("adv.all", 4),
    ("noun.Tops", 1),
    ("noun.act", 1),
    ("noun.animal", 1),
    ("noun.artifact", 1),
    ("noun.attribute", 1),
    ("noun.body", 1),
    ("noun.cognition", 1),
    ("noun.communication", 1),
    ("noun.event", 1),
    ("noun.feeling", 1),
    ("noun.food", 1),
    ("noun.group", 1),
    ("noun.location", 1),
    ("noun.motive", 1),
    ("noun.object", 1),
    ("noun.person", 1),
    ("noun.phenomenon", 1),
    ("noun.plant", 1),
    ("noun.possession", 1),
    ("noun.process", 1),
    ("noun.quantity", 1),
    ("noun.relation", 1),
    ("noun.shape", 1),
    ("noun.state", 1),
    ("noun.substance", 1),
    ("noun.time", 1),
    ("verb.body", 2),
    ("verb.change", 2),
    ("verb.cognition", 2),
    ("verb.communication", 2),
    ("verb.competition", 2),
    ("verb.consumption", 2),
    ("verb.contact", 2),
    ("verb.creation", 2),
    ("verb.emotion", 2),
    ("verb.motion", 2),
    ("verb.perception", 2),
    ("verb.possession", 2),
    ("verb.social", 2),
    ("verb.stative", 2),
    ("verb.weather", 2),
    ("adj.ppl", 3),
]


def install(nltk_data: Path) -> Path:
    """Copy Debian's WordNet into ``nltk_data/corpora/wordnet`` and return that folder."""
    if not (DEBIAN_WORDNET / "data.noun").exists():
        raise SystemExit(f"{DEBIAN_WORDNET} has no WordNet database: apt-get install wordnet-base wordnet-sense-index")
    target = nltk_data / "corpora" / "wordnet"
    target.mkdir(parents=True, exist_ok=True)
    for item in DEBIAN_WORDNET.iterdir():
        if item.is_file():
            shutil.copyfile(item, target / item.name)
    lines = [f"{number:02d}\t{name}\t{category}" for number, (name, category) in enumerate(LEXNAMES)]
    (target / "lexnames").write_text("\n".join(lines) + "\n", encoding="ascii")
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    print(f"WordNet installed in {install(Path(sys.argv[1]))}")
