"""The Constrained decoding tab in headless Chromium on the bundled model: Step fast-forwards the JSON keys, an
illegal forced token is refused naming the legal ones, Back and Run to end work, and the N-samples measurement
shows every constrained answer valid. Screenshots go to artifacts/."""

import pytest

from tests.contrast import contrast_problems
from tests.test_app_e2e import ARTIFACTS

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


def _status_has(page, text: str, timeout: int = 180_000) -> None:
    page.wait_for_function(
        f"(document.querySelector('#cd-status') || {{innerText: ''}}).innerText.includes({text!r})", timeout=timeout
    )


def test_step_force_back_run_to_end_and_measure_in_the_browser(browser, app_url):
    ARTIFACTS.mkdir(exist_ok=True)
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    try:
        page.goto(app_url)
        page.get_by_role("tab", name="Constrained decoding").click()
        page.locator("#cd-step").click()
        _status_has(page, "forced by the grammar")
        assert page.inner_text("#cd-answer").replace("\n", "").startswith('{"name":')
        # after `{"name":` only the opening of the name string can come: x is refused, in an error toast
        page.locator("#cd-token input, #cd-token textarea").first.fill("x")
        page.locator("#cd-force").click()
        page.wait_for_function("document.body.innerText.includes('is not legal here')", timeout=120_000)
        page.locator("#cd-step").click()
        _status_has(page, "1 sampled")
        assert "illegal mass" in page.inner_text("#cd-rows")
        page.locator("#cd-back").click()
        _status_has(page, "0 sampled")
        page.locator("#cd-end").click()
        _status_has(page, "stopped")
        # one chip per token, a space shown as ␣
        assert '"age": ' in page.inner_text("#cd-answer").replace("\n", "").replace("␣", " ")
        page.screenshot(path=str(ARTIFACTS / "e2e-constrained.png"), full_page=True)
        page.locator("#cd-preset input").click()
        page.get_by_role("option", name="answer yes or no").click()
        page.locator("#cd-measure").click()
        page.wait_for_function(
            "(document.querySelector('#cd-measure-md') || {innerText: ''}).innerText.includes('20 of 20')",
            timeout=480_000,
        )
        page.screenshot(path=str(ARTIFACTS / "e2e-constrained-measure.png"), full_page=True)
        assert contrast_problems(page) == []
    finally:
        page.close()
