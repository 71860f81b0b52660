"""Keeps one SQLite connection open for the server's whole life.

In WAL mode the last connection to close checkpoints the database and deletes the WAL file, and
Python 3.11's sqlite3 holds the GIL while it closes: with a connection opened and closed per request,
a close that waits for another thread's lock froze the whole server (every thread, the accept loop)
for up to the 30-second busy timeout. With this connection open, no request's connection is ever
the last one. It also switches the database to WAL once (the mode is stored in the file).
"""
import sqlite3

from django.apps import AppConfig
from django.conf import settings


class DotServerConfig(AppConfig):
    name = "dotserver"
    keeper = None

    def ready(self):
        path = settings.DATABASES["default"]["NAME"]
        connection = sqlite3.connect(path, timeout=30, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        DotServerConfig.keeper = connection
