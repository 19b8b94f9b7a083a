"""The product people open: the DuckDB store, Panel components, the app and the CLI."""
