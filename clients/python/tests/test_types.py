"""The package is typed: `mypy --strict` passes on its source and on
docs/python.md's code as a user's checker reads it (the installed package,
through its `py.typed`), and `wait()` keeps each task's own type. The two
runs share a cache: most of their time is reading pandas' stubs."""

import re
import subprocess
import sys
from pathlib import Path

import marketlab

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT.parents[1] / "docs" / "python.md"

USE = """\
from marketlab import Client, sma_cross
def run(c: Client) -> None:
    t = c.backtest(sma_cross("SPX", 10, 20)).wait()
    reveal_type(t)
    b = c.batch(sma_cross("SPX", 10, 20), grid={"x": [1]}).wait()
    reveal_type(b)
"""


def test_the_package_and_the_docs_code_pass_mypy_strict(tmp_path):
    assert (Path(marketlab.__file__).parent / "py.typed").exists()
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)
    (tmp_path / "python_md.py").write_text("\n".join(blocks))
    (tmp_path / "use.py").write_text(USE)
    (tmp_path / "mypy.ini").write_text("[mypy]\n[mypy-pyarrow.*,quantstats.*]\nignore_missing_imports = True\n")
    def mypy(*args: str) -> str:
        out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), *args],
                             cwd=tmp_path, capture_output=True, text=True)
        errors = [line for line in out.stdout.splitlines() if ": error:" in line]
        assert errors == [], out.stdout + out.stderr
        return out.stdout

    mypy("--config-file", str(ROOT / "pyproject.toml"), str(ROOT / "src" / "marketlab"))
    said = mypy("--config-file", "mypy.ini", "python_md.py", "use.py")
    revealed = [line.split("Revealed type is ")[1] for line in said.splitlines() if "Revealed type" in line]
    assert revealed == ['"marketlab.tasks.BacktestTask"', '"marketlab.tasks.BatchTask"'], said
