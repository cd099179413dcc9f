"""The code behind each mask, on the two lessons that show it (Step by step, the Sampler sandbox): a closed panel,
whose code editor the page loads only once it is opened, showing the project's own function of the strategy picked."""

import pytest
from playwright.sync_api import expect

from tests.helpers.pages import PROJECTOR, idle, new_page

pytestmark = [pytest.mark.browser, pytest.mark.bundled]


@pytest.mark.parametrize("lesson, main", [("step", "#step-prefill"), ("sandbox", "#sandbox-temperature")])
def test_the_code_behind_each_mask_opens_when_asked_with_the_projects_own_function(browser, app_url, lesson, main):
    page = new_page(browser, PROJECTOR)
    page.goto(f"{app_url}?tab={lesson}&projector=0")
    page.locator(main).first.wait_for(timeout=120_000)
    idle(page)
    assert page.locator(".cm-editor").count() == 0, "no code editor until the panel is opened"
    panel = page.locator(".lab-code")
    panel.get_by_text("The code behind each mask", exact=True).click()
    code = panel.locator(".cm-content")
    expect(code).to_contain_text("def top_p_mask", timeout=30_000)  # top-p, picked as it opens
    panel.get_by_role("radio", name="top-k", exact=True).check()
    expect(code).to_contain_text("def top_k_mask", timeout=30_000)
    page.close()
