"""Makes the Profiling guide's picture of Model Explorer (docs/guides/images/model_explorer_mlp.png): the guide's MLP,
compiled and profiled, shown with tp.visualize in a headless Chromium (as docs/check drives it), every layer
expanded. Needs what scripts/visualize-deps installs.

    scripts/visualize-deps && uv run python scripts/visualize_screenshot.py
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "guides" / "images" / "model_explorer_mlp.png"

MODEL = textwrap.dedent("""
    import sys
    import numpy as np
    import tripy as tp


    class MLP(tp.Module):
        def __init__(self):
            super().__init__()
            self.up = tp.Linear(256, 1024)
            self.down = tp.Linear(1024, 256)
            self.norm = tp.LayerNorm(256)

        def forward(self, x):
            h = tp.gelu(self.up(x))
            return self.norm(x + self.down(h))


    model = MLP()
    model.initialize_dummy_parameters()
    exe = tp.compile(model, args=[tp.InputInfo((64, 256), tp.float32)])
    x = tp.Tensor(np.random.default_rng(0).random((64, 256), dtype=np.float32))
    tp.visualize(exe, profile=tp.profile(exe, x, calls=20), host="127.0.0.1", port=int(sys.argv[1]),
                 open_browser=False)
""")


def main() -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    from check import make_driver  # (docs/check.py's headless Chromium)

    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "model.py"
        script.write_text(MODEL)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        server = subprocess.Popen([sys.executable, str(script), str(port)], stdout=subprocess.PIPE, text=True)
        try:
            url = ""
            while not url.startswith("http://127.0.0.1"):
                url = server.stdout.readline().strip()  # type: ignore[union-attr]
            driver = make_driver(
                shutil.which("chromium") or "chromium",
                shutil.which("chromedriver") or "chromedriver",
                str(Path(folder) / "chromium"),
            )
            try:
                driver.set_window_size(1400, 900)
                driver.get(url)
                time.sleep(15)
                driver.execute_script(
                    "[...document.querySelectorAll('mat-icon, .mat-icon, i')]"
                    ".filter(e => e.innerText.trim() === 'unfold_more_double')"
                    ".forEach(e => (e.closest('button, div') || e).click())"
                )
                time.sleep(5)
                driver.save_screenshot(str(OUT))
            finally:
                driver.quit()
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(OUT)


if __name__ == "__main__":
    main()
