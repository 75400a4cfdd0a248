"""The phone scoreboard: a FastAPI app factory, routes, live events and the static page."""
