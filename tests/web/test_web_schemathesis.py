"""Property-based API fuzzing with schemathesis against the app WITH its production limits
(the defaults of :class:`Limits`: cost budget, body size, worker pool): no input produces a
server error."""

import schemathesis
from hypothesis import HealthCheck, settings

from fdpkit.web.common import Limits
from fdpkit.web.main import create_app

APP = create_app(Limits())  # the production limits, not reduced ones
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case):
    response = case.call()
    assert response.status_code < 500, (case.path, case.body, response.text[:300])
