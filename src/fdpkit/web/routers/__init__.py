"""One router per page; each page has a JSON twin under /api."""
