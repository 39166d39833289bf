"""Canonical column values that several readers derive the same way: timestamps, the ``extra``
JSON object and the Kubernetes names in log lines."""
