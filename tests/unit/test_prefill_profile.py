"""bench/prefill_profile.py still builds the Step tab as the app does and presses its Prefill (it broke unseen once,
when the tab's build changed)."""

import asyncio

from bench import prefill_profile


def test_the_prefill_profile_presses_the_apps_prefill_and_reports_its_cpu():
    result = asyncio.run(prefill_profile.run(sessions=2, profiling=False))
    assert result["sessions"] == 2
    assert result["prefill_event_cpu_ms_median"] > 0 and result["burst_max_ms"] >= result["burst_p50_ms"] > 0
