"""The REST API (Django REST Framework) over campaigns, pairs, judgements, metric configurations and scores."""
