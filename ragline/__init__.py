"""The application: wiring from Settings, CLI, API and workers."""
