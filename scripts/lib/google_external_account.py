#!/usr/bin/env python3
"""Google's own client library (google-auth) loading an `external_account` credential file and
refreshing it, as any Google Cloud client would: it runs the file's executable (with
GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1 in its environment) and exchanges the subject token
it prints at the file's token_url.

    google_external_account.py FILE

Prints `refreshed: token of N characters, expires EXPIRY` (never the token), or `refused: WHY`
and exits 1.
"""

import sys

import google.auth.exceptions
import google.auth.transport.requests
from google.auth import pluggable

try:
    # What google.auth.default() builds for an executable-sourced file, without its project id
    # lookup (a call to cloudresourcemanager.googleapis.com, which a test has no way to reach).
    credentials = pluggable.Credentials.from_file(
        sys.argv[1], scopes=["https://www.googleapis.com/auth/cloud-platform"])
    credentials.refresh(google.auth.transport.requests.Request())
except google.auth.exceptions.GoogleAuthError as error:
    print(f"refused: {error}")
    sys.exit(1)
print(f"refreshed: token of {len(credentials.token)} characters, expires {credentials.expiry.isoformat()}")
