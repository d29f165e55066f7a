"""Every staff page: the hub, campaign set-up, uploads, volunteers, exports, the dashboard, the status, pairs."""
