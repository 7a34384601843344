"""No test fails for being slow on a loaded machine: property tests have no deadline."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, settings

TESTS = Path(__file__).parent


def test_the_suites_hypothesis_profile_has_no_deadline():
    assert settings.default.deadline is None
    assert HealthCheck.too_slow in settings.default.suppress_health_check


def test_no_property_test_sets_a_deadline_of_its_own():
    timed = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in TESTS.rglob("*.py")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if re.search(r"\bdeadline\s*=\s*(?!None\b)[\w(]", line) and "settings" in line
    ]
    assert timed == []
