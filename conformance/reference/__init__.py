"""The Python reference's ops, grouped by layer, dispatched by ``conformance.reference_adapter``."""
