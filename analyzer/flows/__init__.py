"""The workflows the library offers, composed from the layers below: ingest a bundle into a
case, match the catalogue, diagnose and write the reports, pack and verify handoffs. The
public face is :mod:`analyzer.api`, which re-exports them; replay and the dashboard are
clients of these modules, never of the API."""
