"""The web front end: a FastAPI app (``main.create_app``), one router per page group under
``routers/``, templates and static files. No maths inside: it calls the library."""
