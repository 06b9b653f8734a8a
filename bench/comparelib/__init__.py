"""Pieces of bench/compare: records and process helpers (common), the
runners that produce records (runners), and the table, JSON and chart
(report)."""
