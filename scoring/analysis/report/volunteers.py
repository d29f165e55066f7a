"""Inter-annotator agreement and the per-volunteer table."""

from __future__ import annotations

import numpy as np

from scoring.analysis import agreement as agreement_stats
from scoring.analysis.labels import (
    BINARY_OF_CODE,
    DONT_KNOW_CODE,
    ORDINAL_OF_CODE,
)
from scoring.analysis.report.convert import coefficient_of, rounded
from scoring.analysis.report.inputs import JudgementRows, VolunteerInfo
from scoring.analysis.report.records import Agreement, VolunteerRow

# --- agreement and volunteers ----------------------------------------------------------------


def agreement_section(judgements: JudgementRows, n_pairs: int) -> Agreement:
    """Inter-annotator agreement on the pairs that two or more volunteers judged."""
    ordinal = ORDINAL_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int64)
    binary = BINARY_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int8)
    ordinal_counts = agreement_stats.category_counts(judgements.pair_index, ordinal - 1, n_pairs, 4)
    binary_counts = agreement_stats.category_counts(judgements.pair_index, binary.astype(np.int64), n_pairs, 2)
    graded_per_pair = ordinal_counts.sum(axis=1)
    judged = np.bincount(judgements.pair_index, minlength=n_pairs) if len(judgements) else np.zeros(n_pairs)
    multi = int(np.count_nonzero(graded_per_pair >= 2))
    first, second = agreement_stats.first_two(judgements.pair_index, binary.astype(np.int64), judgements.answered_at)
    graded_total = int(binary_counts.sum())
    reason = agreement_stats.NOT_MEASURABLE if len(judgements) else "no judgements yet"
    # Without any judgement every coefficient says so (rather than its own, more technical reason).
    none_yet = None if len(judgements) else reason
    return Agreement(
        pairs_judged=int(np.count_nonzero(judged)),
        pairs_multi=multi,
        judgements_per_pair=rounded(float(np.mean(judged[judged > 0])) if np.any(judged) else None, 3),
        measurable=multi > 0,
        reason=None if multi else reason,
        paraphrase_share=rounded(binary_counts[:, 1].sum() / graded_total if graded_total else None),
        krippendorff_alpha=coefficient_of(agreement_stats.krippendorff_alpha(ordinal_counts, [1, 2, 3, 4]), none_yet),
        fleiss_kappa=coefficient_of(agreement_stats.fleiss_kappa(binary_counts), none_yet),
        gwet_ac1=coefficient_of(agreement_stats.gwet_ac1(binary_counts), none_yet),
        cohen_kappa=coefficient_of(agreement_stats.cohen_kappa(first, second), none_yet),
    )


def volunteer_section(judgements: JudgementRows, volunteers: list[VolunteerInfo], n_pairs: int) -> list[VolunteerRow]:
    """One row per volunteer: judgements, leave-one-out agreement, training accuracy, speed."""
    binary = BINARY_OF_CODE[judgements.code] if len(judgements) else np.zeros(0, dtype=np.int8)
    loo = agreement_stats.leave_one_out_agreement(judgements.pair_index, binary, n_pairs)
    rows: list[VolunteerRow] = []
    order = np.argsort(judgements.volunteer, kind="stable")
    volunteer_sorted = judgements.volunteer[order]
    for info in volunteers:
        start, end = np.searchsorted(volunteer_sorted, [info.id, info.id + 1])
        mine = order[start:end]
        compared = int(np.count_nonzero(loo.compared[mine]))
        agreed = int(np.count_nonzero(loo.agrees[mine]))
        times = judgements.response_seconds[mine]
        times = times[np.isfinite(times)]
        if len(mine) == 0 and info.training_answers == 0:
            continue
        rows.append(
            VolunteerRow(
                id=info.id,
                volunteer=info.pseudonym or f"#{info.id}",
                english_level=info.english_level,
                judgements=len(mine),
                dont_know=int(np.count_nonzero(judgements.code[mine] == DONT_KNOW_CODE)),
                compared=compared,
                agreement=rounded(agreed / compared if compared else None, 4),
                training_answers=info.training_answers,
                training_correct=info.training_correct,
                training_accuracy=rounded(
                    info.training_correct / info.training_answers if info.training_answers else None, 4
                ),
                median_response_seconds=rounded(float(np.median(times)) if len(times) else None, 2),
            )
        )
    rows.sort(key=lambda row: (-row.judgements, row.id))
    return rows
