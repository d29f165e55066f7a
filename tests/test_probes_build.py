"""Each probe kind built by the real spaCy pipeline on known sentences gives exactly the
sentences written here by hand."""

from __future__ import annotations

import pytest

from scoring.probes.build import BUILDABLE, Probe, ProbeKind, SourcePair, build_probes
from scoring.probes.parse import parse_pairs

SEED = 20250101
FLIGHTS = SourcePair("a", "Flights from Boston to Denver leave daily.", "Daily flights go from Boston to Denver.", True)
COMPANY = SourcePair(
    "b",
    "The company did not sell 3,000 cats and dogs in Paris on Monday, March 3, 2004.",
    "In Paris the firm sold no cats.",
    None,
)
AMROZI = SourcePair(
    "c",
    'Amrozi accused his brother, whom he called "the witness", of deliberately distorting his evidence.',
    'Referring to him as only "the witness", Amrozi accused his brother of deliberately distorting his evidence.',
    True,
)


@pytest.fixture(scope="module")
def probes() -> dict[str, list[Probe]]:
    built = build_probes(parse_pairs([FLIGHTS, COMPANY, AMROZI]), BUILDABLE, SEED)
    return {key: [p for p in built if p.group == key] for key in "abc"}


def rows(probes: list[Probe], kind: ProbeKind) -> list[tuple[str, str, bool | None, str]]:
    return [(p.source, p.hypothesis, p.expected_paraphrase, p.detail) for p in probes if p.kind == kind]


def test_paws_swap_exchanges_the_only_two_places(probes: dict[str, list[Probe]]) -> None:
    # Boston and Denver are the only two units of one swap tag: the swap is forced.
    assert rows(probes["a"], ProbeKind.PAWS_SWAP) == [
        (FLIGHTS.source, "Flights from Denver to Boston leave daily.", False, "Boston <-> Denver")
    ]
    assert rows(probes["c"], ProbeKind.PAWS_SWAP) == [
        (
            AMROZI.source,
            'Amrozi accused his brother, whom he called "the evidence", of deliberately distorting his witness.',
            False,
            "witness <-> evidence",
        )
    ]


def test_controls_keep_the_meaning(probes: dict[str, list[Probe]]) -> None:
    assert rows(probes["a"], ProbeKind.CONTROL) == [
        (FLIGHTS.source, "Flights from Boston to Denver leave daily.", True, "identity"),
        (FLIGHTS.source, "Flights from Boston to Denver leave daily", True, "punctuation"),
        (FLIGHTS.source, "flights from boston to denver leave daily.", True, "case"),
    ]
    assert rows(probes["b"], ProbeKind.CONTROL) == [
        (COMPANY.source, COMPANY.source, True, "identity"),
        (
            COMPANY.source,
            "The company did not sell 3,000 dogs and cats in Paris on Monday, March 3, 2004.",
            True,
            "coordination",
        ),
        (
            COMPANY.source,
            "The company did not sell 3,000 cats and dogs in Paris on Monday March 3 2004",
            True,
            "punctuation",
        ),
        (
            COMPANY.source,
            "the company did not sell 3,000 cats and dogs in paris on monday, march 3, 2004.",
            True,
            "case",
        ),
    ]


def test_number_date_and_negation_changes(probes: dict[str, list[Probe]]) -> None:
    assert rows(probes["b"], ProbeKind.NUMBER) == [
        (
            COMPANY.source,
            "The company did not sell 4,000 cats and dogs in Paris on Monday, March 3, 2004.",
            False,
            "3,000 -> 4,000",
        )
    ]
    assert rows(probes["b"], ProbeKind.DATE) == [
        (
            COMPANY.source,
            "The company did not sell 3,000 cats and dogs in Paris on Monday, October 3, 2004.",
            False,
            "March -> October",
        )
    ]
    # A negation removed ...
    assert rows(probes["b"], ProbeKind.NEGATION) == [
        (COMPANY.source, "The company did sell 3,000 cats and dogs in Paris on Monday, March 3, 2004.", False, "-not")
    ]
    # ... and one added with the auxiliary that carries the tense.
    assert rows(probes["c"], ProbeKind.NEGATION) == [
        (
            AMROZI.source,
            'Amrozi did not accuse his brother, whom he called "the witness", of deliberately distorting his evidence.',
            False,
            "+did not",
        )
    ]
    # No number, no date in the flights sentence: no such probe.
    assert rows(probes["a"], ProbeKind.NUMBER) == rows(probes["a"], ProbeKind.DATE) == []


def test_multi_swap_versions_swap_one_more_pair_each(probes: dict[str, list[Probe]]) -> None:
    ranked = [
        (p.swaps, p.hypothesis, p.expected_paraphrase) for p in probes["c"] if p.kind in ("original", "multi_swap")
    ]
    assert ranked == [
        (0, AMROZI.hypothesis, True),
        (
            1,
            'Referring to him as only "the evidence", '
            "Amrozi accused his brother of deliberately distorting his witness.",
            False,
        ),
        (
            2,
            'Referring to him as deliberately "the evidence", '
            "Amrozi accused his brother of only distorting his witness.",
            False,
        ),
        # The capital follows the first position: "accused" arrives there, "Referring" leaves it.
        (
            3,
            'Accused to him as deliberately "the evidence", '
            "Amrozi referring his brother of only distorting his witness.",
            False,
        ),
    ]
    # Too few swap tags in the flights pair's hypothesis (paper 004 asks for three): no versions.
    assert [p for p in probes["a"] if p.kind == ProbeKind.MULTI_SWAP] == []


def test_reversed_and_padded_pairs(probes: dict[str, list[Probe]]) -> None:
    assert rows(probes["a"], ProbeKind.REVERSED) == [(FLIGHTS.hypothesis, FLIGHTS.source, True, "reversed")]
    assert rows(probes["a"], ProbeKind.PADDED) == [
        (FLIGHTS.source, "As it happens, daily flights go from Boston to Denver.", True, "As it happens,")
    ]
    # The label of a pair whose label is unknown stays unknown.
    assert rows(probes["b"], ProbeKind.REVERSED) == [(COMPANY.hypothesis, COMPANY.source, None, "reversed")]


def test_a_group_is_built_the_same_whatever_else_is_built_and_the_seed_changes_it() -> None:
    alone = build_probes(parse_pairs([AMROZI]), BUILDABLE, SEED)
    together = [p for p in build_probes(parse_pairs([FLIGHTS, AMROZI]), BUILDABLE, SEED) if p.group == "c"]
    assert alone == together
    other_seed = build_probes(parse_pairs([AMROZI]), [ProbeKind.MULTI_SWAP], SEED + 1)
    assert [p.hypothesis for p in other_seed] != [p.hypothesis for p in alone if p.kind in ("original", "multi_swap")]


def test_only_the_kinds_asked_for() -> None:
    built = build_probes(parse_pairs([FLIGHTS]), [ProbeKind.REVERSED], SEED)
    assert [p.kind for p in built] == [ProbeKind.ORIGINAL, ProbeKind.REVERSED]
