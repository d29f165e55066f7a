"""Staff views: the agreement dashboard (dashboard.py) and the scoring status (status.py)."""
