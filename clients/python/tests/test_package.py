"""The package installs into a fresh virtual environment from the
repository and PyPI alone, and imports there."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_it_installs_in_a_fresh_venv(tmp_path):
    uv = Path(sys.executable).parent / "uv"
    venv = tmp_path / "venv"
    subprocess.run([str(uv), "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(uv), "pip", "install", "--quiet", "--python", str(python), str(ROOT)], check=True)
    out = subprocess.run([str(python), "-c", "import marketlab, pandas; print(marketlab.__version__, marketlab.Client.__name__)"],
                         check=True, capture_output=True, text=True)
    assert out.stdout.split() == ["1.0.0", "Client"]
