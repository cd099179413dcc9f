"""Starting the app for the browser tests and benchmarks (ui.launch.start_app): an app whose web server did not start
in gradio's 5 s (a loaded machine) is started again; any other early exit is said with what the app wrote."""

import pytest

from ui import launch

# an "app" that exits as gradio does when its server was slow to start, as long as a marker file is missing (it
# makes it first), then serves HTTP on its --port; with "--fail" it exits with another message
STAND_IN = """
import http.server, pathlib, sys
port, marker = int(sys.argv[sys.argv.index("--port") + 1]), pathlib.Path(sys.argv[1])
if "--fail" in sys.argv:
    sys.exit("ModuleNotFoundError: no module named 'torch'")
if not marker.exists():
    marker.touch()
    sys.exit("OSError: Cannot find empty port in range: 7860-7860.")
http.server.HTTPServer(("127.0.0.1", port), http.server.SimpleHTTPRequestHandler).serve_forever()
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    script = tmp_path / "app.py"
    script.write_text(STAND_IN)
    monkeypatch.setattr(launch, "APP", [str(script), str(tmp_path / "tried-once")])
    return script


def test_an_app_whose_server_was_slow_to_start_is_started_again(stand_in):
    proc = launch.start_app(launch.free_port(), timeout_s=60)
    assert proc.poll() is None and (stand_in.parent / "tried-once").exists()
    proc.kill()
    proc.wait()


def test_any_other_early_exit_says_what_the_app_wrote(stand_in, monkeypatch):
    monkeypatch.setattr(launch, "APP", [*launch.APP, "--fail"])
    with pytest.raises(RuntimeError, match="exited with code 1 before answering:\\n.*no module named 'torch'"):
        launch.start_app(launch.free_port(), timeout_s=60)


def test_the_retry_stops_after_its_attempts(stand_in):
    with pytest.raises(RuntimeError, match="Cannot find empty port"):
        launch.start_app(launch.free_port(), timeout_s=60, attempts=1)
