"""Word tokenisers for the n-gram metrics (BLEU, Self-BLEU, iBLEU), chosen by name.

The ParaPLUIE paper does not say how it tokenised for BLEU. Its Table 1 MRPC column is
reproduced by the text it scored (the Hugging Face ``glue/mrpc`` copy, which is
Moses-tokenised: ``doesn 't``, ``$ 2.5``, ``4.4 %``) lowercased and split on whitespace. On raw
text, ``moses_lower`` (Moses tokenisation by sacremoses, then lowercase) reproduces exactly
that; ``benchmarks/reproduce_table1_mrpc.py --tokenisers`` prints the comparison.

Every tokeniser is imported lazily (sacremoses and NLTK are not needed to hash a
configuration) and built once per process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import metadata
from typing import Any

Tokeniser = Callable[[str], list[str]]

# torchtext.data.utils._basic_english_normalize (torchtext 0.6-0.18), rule for rule: lowercase,
# then these substitutions in this order, then split on whitespace.
_BASIC_ENGLISH_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\'", " '  "),
        (r"\"", ""),
        (r"\.", " . "),
        (r"<br \/>", " "),
        (r",", " , "),
        (r"\(", " ( "),
        (r"\)", " ) "),
        (r"\!", " ! "),
        (r"\?", " ? "),
        (r"\;", " "),
        (r"\:", " "),
        (r"\s+", " "),
    )
)


def basic_english(text: str) -> list[str]:
    """torchtext's ``get_tokenizer("basic_english")``, reimplemented from its definition."""
    line = text.lower()
    for pattern, replacement in _BASIC_ENGLISH_RULES:
        line = pattern.sub(replacement, line)
    return line.split()


def whitespace(text: str) -> list[str]:
    """Split on runs of whitespace (torchtext's ``get_tokenizer(None)``, ``str.split``)."""
    return text.split()


def whitespace_lower(text: str) -> list[str]:
    return text.lower().split()


@cache
def _moses() -> Any:
    from sacremoses import MosesTokenizer

    return MosesTokenizer(lang="en")


@lru_cache(maxsize=8192)
def _moses_tokens(text: str) -> tuple[str, ...]:
    # Moses' regular expressions cost ~1 ms a sentence; a campaign repeats its sources.
    return tuple(_moses().tokenize(text, escape=False))


def moses(text: str) -> list[str]:
    """Moses tokenisation for English (sacremoses; no HTML escaping, no aggressive dash split)."""
    return list(_moses_tokens(text))


def moses_lower(text: str) -> list[str]:
    """Moses tokens, then lowercased (lowercasing after keeps Moses' ``Mr.``-style exceptions)."""
    return [token.lower() for token in moses(text)]


@cache
def _nltk_word() -> Any:
    from nltk.tokenize import NLTKWordTokenizer

    return NLTKWordTokenizer()


def nltk_word(text: str) -> list[str]:
    """NLTK's Treebank-style word tokeniser (what ``word_tokenize`` uses, without the punkt step)."""
    tokens: list[str] = _nltk_word().tokenize(text)
    return tokens


def nltk_word_lower(text: str) -> list[str]:
    return nltk_word(text.lower())


@dataclass(frozen=True)
class TokeniserSpec:
    """A named tokeniser, the library whose version changes its output, and a description."""

    function: Tokeniser
    library: str | None
    description: str


TOKENISERS: dict[str, TokeniserSpec] = {
    "moses_lower": TokeniserSpec(moses_lower, "sacremoses", "Moses tokens (sacremoses, English), lowercased"),
    "moses": TokeniserSpec(moses, "sacremoses", "Moses tokens (sacremoses, English)"),
    "whitespace": TokeniserSpec(whitespace, None, "split on whitespace"),
    "whitespace_lower": TokeniserSpec(whitespace_lower, None, "lowercase, split on whitespace"),
    "basic_english": TokeniserSpec(basic_english, None, "torchtext basic_english (lowercase, punctuation rules)"),
    "nltk": TokeniserSpec(nltk_word, "nltk", "NLTK Treebank word tokeniser"),
    "nltk_lower": TokeniserSpec(nltk_word_lower, "nltk", "NLTK Treebank word tokeniser on lowercased text"),
}


def check_tokeniser(name: str) -> str:
    """Return ``name`` if it is a known tokeniser, else raise ``ValueError`` listing them."""
    if name not in TOKENISERS:
        raise ValueError(f"unknown tokeniser {name!r}; known tokenisers: {', '.join(TOKENISERS)}")
    return name


def get_tokeniser(name: str) -> Tokeniser:
    return TOKENISERS[check_tokeniser(name)].function


def tokeniser_config(name: str) -> dict[str, Any]:
    """The tokeniser's name and, where a library does the work, that library's version."""
    spec = TOKENISERS[check_tokeniser(name)]
    config: dict[str, Any] = {"tokeniser": name}
    if spec.library:
        config["tokeniser_library"] = f"{spec.library}=={package_version(spec.library)}"
    return config


@cache
def package_version(distribution: str) -> str:
    """Installed version of a distribution, or ``"missing"`` (read from metadata, no import)."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "missing"


def clear_caches() -> None:
    """Forget cached Moses tokens (benchmarks time tokenisation from scratch)."""
    _moses_tokens.cache_clear()
