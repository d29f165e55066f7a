"""METEOR (Banerjee & Lavie 2005) through NLTK's ``meteor_score``, with WordNet read from NLTK_DATA.

WordNet cannot be downloaded at run time here: ``scripts/setup.sh`` installs it from Debian's
packages into ``NLTK_DATA``. Without it METEOR reports itself unavailable (synonym matching is
part of the metric, so scoring without WordNet would silently give other numbers).
"""

from __future__ import annotations

import os
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from scoring.metrics.base import Metric, MetricUnavailable, Pair
from scoring.metrics.tokenize import nltk_word, package_version

WORDNET_VERSION = "3.0"
# Files NLTK's WordNet reader opens when it starts (lexnames is the one Debian does not ship).
_WORDNET_FILES = ("lexnames", "index.noun", "data.noun", "index.verb", "data.verb", "index.adj", "index.adv")
_SETUP_HINT = "run scripts/setup.sh (it installs WordNet from Debian's wordnet-base package)"


def wordnet_directory(nltk_data: str) -> Path:
    """The WordNet folder under an NLTK data folder, or :class:`MetricUnavailable` saying what is missing."""
    directory = Path(nltk_data) / "corpora" / "wordnet"
    if not directory.is_dir():
        raise MetricUnavailable(
            f"WordNet is not installed in NLTK_DATA={nltk_data} (no corpora/wordnet): {_SETUP_HINT}"
        )
    missing = [name for name in _WORDNET_FILES if not (directory / name).is_file()]
    if missing:
        raise MetricUnavailable(f"WordNet in {directory} is incomplete (missing {', '.join(missing)}): {_SETUP_HINT}")
    return directory


@lru_cache(maxsize=2)
def load_wordnet(nltk_data: str) -> Any:
    """NLTK's WordNet reader on ``nltk_data`` only (not whatever else is on nltk.data.path)."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    directory = wordnet_directory(nltk_data)
    # NLTK only opens corpora under the folders listed in nltk.data.path (its path sandbox).
    if nltk_data not in nltk.data.path:
        nltk.data.path.append(nltk_data)
    try:
        pointer = nltk.data.find("corpora/wordnet", paths=[nltk_data])
        with warnings.catch_warnings():
            # "multilingual functions are not available": no Open Multilingual Wordnet, none needed.
            warnings.simplefilter("ignore", UserWarning)
            reader = WordNetCorpusReader(pointer, None)
        version = reader.get_version()
    except (LookupError, OSError, ValueError) as error:
        raise MetricUnavailable(f"WordNet in {directory} cannot be read ({error}): {_SETUP_HINT}") from error
    if version != WORDNET_VERSION:
        raise MetricUnavailable(
            f"WordNet in {directory} is version {version}; METEOR here is defined on {WORDNET_VERSION}"
        )
    return reader


class Meteor(Metric):
    """METEOR of the hypothesis against the source, NLTK's implementation and parameters."""

    name: ClassVar[str] = "meteor"
    description = (
        "METEOR (NLTK meteor_score: exact, Porter-stem and WordNet-synonym matches; alpha 0.9, beta 3, gamma 0.5)."
    )

    def __init__(self, nltk_data: str | None = None, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5) -> None:
        self._nltk_data = nltk_data
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma

    @property
    def nltk_data(self) -> str:
        """The NLTK data folder: the constructor's, else the installation's (``NLTK_DATA``)."""
        if self._nltk_data:
            return str(Path(self._nltk_data).resolve())
        from scoring.metrics import environment

        folder = environment.current().nltk_data or os.environ.get("NLTK_DATA", "")
        return str(Path(folder).resolve()) if folder else ""

    def config(self) -> dict[str, Any]:
        return {
            "library": f"nltk=={package_version('nltk')}",
            "wordnet": WORDNET_VERSION,
            "alpha": self.alpha,
            "beta": self.beta,
            "gamma": self.gamma,
            "stemmer": "porter",
            "preprocess": "lowercase",
            "tokeniser": "nltk (NLTKWordTokenizer)",
            "hypothesis": "hypothesis",
            "reference": "source",
        }

    def check_available(self) -> None:
        """Cheap check that WordNet's files are in NLTK_DATA (reading them happens on first score)."""
        wordnet_directory(self.nltk_data)

    def _score(self, pairs: list[Pair]) -> list[float]:
        from nltk.translate.meteor_score import meteor_score

        wordnet = load_wordnet(self.nltk_data)
        return [
            meteor_score(
                [nltk_word(source)],
                nltk_word(hypothesis),
                wordnet=wordnet,
                alpha=self.alpha,
                beta=self.beta,
                gamma=self.gamma,
            )
            for source, hypothesis in pairs
        ]
