"""REST API of the annotate app: campaigns, pairs (bulk import), judgements, exports."""
