"""Scores computed outside ParaEval: a researcher's file of precomputed scores becomes an
external metric configuration (:mod:`scoring.external.score_import`)."""
