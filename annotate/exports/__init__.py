"""Streamed exports of the labelled corpus (judgement level and pair level)."""
