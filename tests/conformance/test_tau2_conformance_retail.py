"""The retail slice of the conformance suite (see test_tau2_conformance.py), in a file of its own so it
runs beside the airline slice."""

from __future__ import annotations

import pytest

from tests.conformance.test_tau2_conformance import check_domain, reference  # noqa: F401  (the fixture)

pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


def test_every_generated_call_answers_as_tau2_bench_does(reference):  # noqa: F811
    check_domain("retail")
