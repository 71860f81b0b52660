#!/usr/bin/env python3
"""django-oauth-toolkit as NativeAuth's real test server; see scripts/test-server."""
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "dotserver.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
