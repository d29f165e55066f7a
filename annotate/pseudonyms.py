"""Stable pseudonyms for volunteers, safe to publish.

A volunteer's token is a credential: whoever holds it can answer in that volunteer's name.
Exports and the API therefore never show it; they show a keyed hash of it instead. The key is
``SECRET_KEY``, so the pseudonym is stable across exports of one deployment, cannot be turned
back into the token, and cannot be recomputed by someone who only has the published corpus.
(Rotating ``SECRET_KEY`` changes every pseudonym.)
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.crypto import salted_hmac

# Salt of the HMAC: a pseudonym is useless as any other Django signature and vice versa.
_SALT = "paraeval.annotate.exports.volunteer-pseudonym"
# 16 hex characters = 64 bits: collisions are negligible for any number of volunteers.
PSEUDONYM_LENGTH = 16


def volunteer_pseudonym(token: str) -> str:
    """Return the public pseudonym of the volunteer whose secret token is ``token``."""
    return salted_hmac(_SALT, token, algorithm="sha256").hexdigest()[:PSEUDONYM_LENGTH]


def volunteer_ids_for_pseudonym(pseudonym: str, volunteers: Iterable[tuple[int, str]]) -> list[int]:
    """Ids of the ``(id, token)`` volunteers whose pseudonym is ``pseudonym``.

    The hash cannot be computed in SQL, so filters by pseudonym hash each candidate token;
    callers narrow ``volunteers`` first (e.g. to one campaign) where they can.
    """
    wanted = pseudonym.strip().lower()
    return [volunteer_id for volunteer_id, token in volunteers if volunteer_pseudonym(token) == wanted]
