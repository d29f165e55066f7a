"""Probe sets: pairs built from a corpus's own sentences so that the relation a metric should
find is known by construction (word swaps, changed numbers, dates and negations, reversed and
padded pairs). ``sentence`` and ``build`` are plain Python over parsed tokens; ``parse`` runs the
spaCy pipeline; ``store`` keeps a probe set as a campaign of its own."""
