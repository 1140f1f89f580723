"""Metrics, alert rules, dashboards and audit export."""
