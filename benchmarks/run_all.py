"""Run every benchmark in this folder, one after the other (``make bench``)."""

import subprocess
import sys
from pathlib import Path

here = Path(__file__).parent
failed = []
for script in sorted(here.glob("bench_*.py")):
    print(f"== {script.name}", flush=True)
    if subprocess.run([sys.executable, str(script)]).returncode != 0:
        failed.append(script.name)
sys.exit(f"failed: {', '.join(failed)}" if failed else 0)
