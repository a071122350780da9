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
from marketlab import AsyncClient, Client, sma_cross
def run(c: Client) -> None:
    t = c.backtest(sma_cross("SPX", 10, 20)).wait()
    reveal_type(t)
    b = c.batch(sma_cross("SPX", 10, 20), grid={"x": [1]}).wait()
    reveal_type(b)
    reveal_type(t.equity)
async def run_async(c: AsyncClient) -> None:
    t = await (await c.backtest(sma_cross("SPX", 10, 20))).wait()
    reveal_type(t)
    reveal_type(await t.equity)
    reveal_type(await c.prices("SPX"))
"""
# A misspelt keyword, a missing await and a wrong strategy field: each an
# error the checker reports.
MISUSE = """\
from marketlab import AsyncClient, Client, Strategy, sma_cross
def run(c: Client) -> None:
    c.seasonality("SPX", "month", start_yr=2010)
async def run_async(c: AsyncClient) -> None:
    c.prices("SPX")
bad: Strategy = {"symbol": "SPX", "entry": sma_cross("SPX", 1, 2)["entry"], "exit": sma_cross("SPX", 1, 2)["exit"], "comission": 0.1}
"""


def test_the_package_and_the_docs_code_pass_mypy_strict(tmp_path):
    assert (Path(marketlab.__file__).parent / "py.typed").exists()
    blocks = re.findall(r"^```python\n(.*?)^```", PAGE.read_text(), flags=re.S | re.M)
    (tmp_path / "python_md.py").write_text("\n".join(blocks))
    (tmp_path / "use.py").write_text(USE)
    (tmp_path / "mypy.ini").write_text("[mypy]\n[mypy-quantstats.*]\nignore_missing_imports = True\n")
    (tmp_path / "misuse.py").write_text(MISUSE)

    def mypy(*args: str, errors_in: str | None = None) -> str:
        out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), *args],
                             cwd=tmp_path, capture_output=True, text=True)
        errors = [line for line in out.stdout.splitlines() if ": error:" in line]
        if errors_in is None:
            assert errors == [], out.stdout + out.stderr
        else:
            assert all(line.startswith(errors_in) for line in errors), out.stdout
        return out.stdout

    mypy("--config-file", str(ROOT / "pyproject.toml"), str(ROOT / "src" / "marketlab"))
    said = mypy("--config-file", "mypy.ini", "python_md.py", "use.py")
    revealed = [line.split("Revealed type is ")[1] for line in said.splitlines() if "Revealed type" in line]
    assert revealed == ['"marketlab.tasks.BacktestTask"', '"marketlab.tasks.BatchTask"', '"pandas.core.frame.DataFrame"',
                        '"marketlab.tasks.AsyncBacktestTask"', '"pandas.core.frame.DataFrame"', '"pandas.core.frame.DataFrame"'], said
    misuse = mypy("--config-file", "mypy.ini", "misuse.py", errors_in="misuse.py:")
    assert 'Unexpected keyword argument "start_yr"' in misuse
    assert "unused-coroutine" in misuse or "must be used" in misuse
    assert '"comission"' in misuse
