"""The bounded load check on loopback: 50 concurrent report requests, zero errors."""

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "loadcheck.py"


def test_fifty_concurrent_reports_without_errors():
    out = subprocess.run([sys.executable, str(SCRIPT), "--requests", "50", "--concurrency", "50", "--deadline", "240"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 errors" in out.stdout and "p50" in out.stdout
