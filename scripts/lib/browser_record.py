"""What a test browser was started with, recorded for the tests that search it for secrets."""
import json
import os
import sys
import tempfile


def record():
    """Writes argv and the environment as JSON to $BROWSER_RECORD_FILE and $BROWSER_RECORD_DIR."""
    entry = json.dumps({"argv": sys.argv, "environment": dict(os.environ)})
    target = os.environ.get("BROWSER_RECORD_FILE")
    if target:
        with open(target, "a") as file:
            file.write(entry + "\n")
    directory = os.environ.get("BROWSER_RECORD_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=directory, prefix="browser-", suffix=".json", delete=False) as file:
            file.write(entry + "\n")
